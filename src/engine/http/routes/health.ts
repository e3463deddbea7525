/**
 * GET /v1/health: whether the engine answers, its version, its queues, its warm pool and sandbox,
 * and the store's files it could not read.
 */
import type { Registrar, RouteDeps } from './route.js';

export const registerHealth: Registrar = (router, deps) => {
  router.add('GET', '/v1/health', {
    handle: async () => {
      // the store's files moved aside: their deployments and servers are missing from every list
      const unreadable = await deps.unreadable?.().catch(() => undefined);
      return {
        status: 200,
        data: { ...healthOf(deps), ...(unreadable === undefined ? {} : { unreadable_records: unreadable }) },
      };
    },
  });
};

function healthOf(deps: RouteDeps): Record<string, unknown> {
  const admission = deps.admission;
  return {
    status: deps.isDraining() ? 'stopping' : 'ok',
    version: deps.version,
    uptime_seconds: round((deps.clock() - deps.startedAt) / 1000, 3),
    // how much work waits for a slot, and how much runs (docs/engine.md, admission)
    ...(admission === undefined
      ? {}
      : {
          queues: {
            starts: admission.starts.stats(),
            builds: admission.builds.stats(),
            tests: admission.tests.stats(),
          },
        }),
    // runtime processes loaded and waiting for a bundle (docs/engine.md, warm pool)
    ...(deps.warmPool === undefined ? {} : { warm_pool: deps.warmPool.stats() }),
    // the process sandbox and how resources are enforced (docs/security.md)
    ...(deps.isolation === undefined ? {} : { isolation: deps.isolation }),
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
