/** Deployments: supervised runtime instances behind the gateway. */
export {
  createDeploymentService,
  type DeploymentServiceOptions,
  type LocalDeploymentService,
} from './deployment-service.js';
export { noticesFor } from './new-record.js';
export { DEFAULT_LIMITS, type DeploymentLimits } from './limits.js';
export type { DeploymentServiceDeps, RuntimeProcessHandle, StartRuntimeProcess } from '../services.js';
