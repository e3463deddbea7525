/**
 * A deployment's past: `GET /v1/deploy/{id}/usage?since=` (calls per tool, client, user and day)
 * and the `since` form of `GET /v1/deploy/{id}/metrics` (points and totals from the history), both
 * answered from the engine's history (src/engine/observability/history.ts).
 */
import { MAX_HISTORY_POINTS, parseSince, SINCE_RULE } from '../../../api/usage.js';
import type { HistoryReader } from '../../observability/history.js';
import { ServiceError } from '../../service-error.js';
import { badQuery, readNumber } from '../query.js';
import type { Reply } from '../respond.js';
import { findDeployment } from './lookups.js';
import type { Registrar, RouteContext, RouteDeps } from './route.js';

/** Usage looks back this far when the request does not say. */
const DEFAULT_USAGE_SINCE_MS = 7 * 86_400_000;

export const registerDeploymentHistory: Registrar = (router, deps) => {
  router.add('GET', '/v1/deploy/:id/usage', {
    handle: async (ctx) => {
      const id = (await findDeployment(deps.store, ctx.params.id!)).deployment.deployment_id;
      const since = readSince(ctx.query) ?? DEFAULT_USAGE_SINCE_MS;
      return { status: 200, data: requireHistory(deps).usage(id, since) };
    },
  });
};

/** The metrics of `?since=` (with `points`, the most points wanted); undefined without `since`. */
export async function metricsSince(ctx: RouteContext, deps: RouteDeps): Promise<Reply | undefined> {
  const since = readSince(ctx.query);
  if (since === undefined) return undefined;
  const points = readNumber(ctx.query, 'points', { min: 1, max: MAX_HISTORY_POINTS, integer: true });
  const id = (await findDeployment(deps.store, ctx.params.id!)).deployment.deployment_id;
  return { status: 200, data: requireHistory(deps).metrics(id, since, points) };
}

function readSince(query: URLSearchParams): number | undefined {
  const raw = query.get('since');
  if (raw === null) return undefined;
  const since = parseSince(raw);
  if (since === undefined) throw badQuery('since', SINCE_RULE);
  return since;
}

function requireHistory(deps: RouteDeps): HistoryReader {
  if (deps.history === undefined) {
    throw new ServiceError(
      'not_implemented',
      'this engine keeps no metrics history: it could not be opened (the engine log says why); ' +
        'without `since`, the metrics of the last minutes are there',
    );
  }
  return deps.history;
}
