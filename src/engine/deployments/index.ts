/** Deployments: supervised runtime instances behind the gateway. */
export { createDeploymentService, noticesFor, type DeploymentServiceOptions, type LocalDeploymentService } from './service.js';
export { DEFAULT_LIMITS, type DeploymentLimits } from './limits.js';
export type { DeploymentServiceDeps, RuntimeProcessHandle, StartRuntimeProcess } from '../types.js';
