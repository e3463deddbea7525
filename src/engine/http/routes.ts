/**
 * The /v1 operations of docs/api.md, each a function of its validated input, registered by
 * resource (routes/). The pipeline around them (auth, rate limit, body, idempotency, envelope,
 * errors) is app.ts.
 */
import { Router } from './router.js';
import { registerAlerts } from './routes/alerts.js';
import { registerDeployments } from './routes/deployments.js';
import { registerDeploymentHistory } from './routes/deployment-history.js';
import { registerHealth } from './routes/health.js';
import type { Registrar, Route, RouteDeps } from './routes/route.js';
import { registerServers } from './routes/servers.js';
import { registerTests } from './routes/tests.js';

export type { Route, RouteContext, RouteDeps } from './routes/route.js';
export { etagOf } from './routes/long-poll.js';

/** The resources, in the order docs/api.md lists them. */
const REGISTRARS: Registrar[] = [
  registerHealth,
  registerServers,
  registerDeployments,
  registerDeploymentHistory,
  registerTests,
  registerAlerts,
];

export function createRoutes(deps: RouteDeps): Router<Route> {
  const router = new Router<Route>();
  for (const register of REGISTRARS) register(router, deps);
  return router;
}
