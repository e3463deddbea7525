/**
 * GET /v1/alerts: the alerts firing now and those resolved lately, per deployment
 * (`?deployment=<id>` for one), from the engine's alert evaluation (src/engine/alerts/).
 */
import { DEPLOYMENT_ID_PATTERN } from '../../../api/contract.js';
import { ServiceError } from '../../service-error.js';
import { badQuery } from '../query.js';
import type { Registrar } from './route.js';

export const registerAlerts: Registrar = (router, deps) => {
  router.add('GET', '/v1/alerts', {
    handle: async (ctx) => {
      const deployment = ctx.query.get('deployment') ?? undefined;
      if (deployment !== undefined && !DEPLOYMENT_ID_PATTERN.test(deployment)) {
        throw badQuery('deployment', 'must have the form deploy_<id>');
      }
      if (deps.alerts === undefined) {
        throw new ServiceError('not_implemented', 'alerts are not evaluated on this engine: it runs no deployments');
      }
      return { status: 200, data: deps.alerts.list(deployment) };
    },
  });
};
