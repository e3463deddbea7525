/** The test agent behind POST /v1/test: `mcpctl-local` offline, the engine's other models through their providers' APIs. */
export { createTestService, type TestServiceDeps } from './test-service.js';
export { DEFAULT_AGENT_LIMITS, type Agent, type AgentLimits, type AgentSession, type Catalog } from './agent-types.js';
