/** Paths and names of the runtime's HTTP surface, importable without loading the MCP SDK. */

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/health';
/** Where a caller's user id travels: an HTTP header, or a request's `_meta`. */
export const USER_ID_HEADER = 'x-mcp-user-id';
export const USER_ID_META_KEY = 'mcpctl/user_id';
/**
 * The variable a deployed instance finds its deployment's request-state key in (input-required
 * results); the runtime takes it out of its environment at start.
 */
export const REQUEST_STATE_KEY_ENV = 'MCPCTL_REQUEST_STATE_KEY';

/**
 * The folder the instances of one deployment share for the state of their tasks (the tasks
 * extension). The engine creates one per deployment; without it a runtime keeps tasks in memory.
 */
export const TASKS_DIR_ENV = 'MCPCTL_TASKS_DIR';
