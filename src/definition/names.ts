/**
 * The names and bounds of a definition that other layers check without its schema: templates,
 * environments, the patterns of names, the limits. Apart from `schema.ts` because building the
 * zod schema of a whole definition costs start-up time that a command reading a deployment's
 * status (`deploy <mcp_id>`, `status`, `ls` …) has no use for. `schema.ts` re-exports all of it.
 *
 * Pure: no IO, no zod.
 */

export const TEMPLATES = ['basic', 'advanced', 'custom'] as const;
export const ENVIRONMENTS = ['production', 'staging', 'development'] as const;

/** Tool names as LLM provider APIs accept them (no dots, at most 64 characters). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Server names end up in URLs, file names and MCP implementation info. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Prompt and argument names: identifiers, so `{{args.name}}` can reach them. */
export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** `<scheme>://<name>`; the name part may hold `{var}` URI-template expressions. */
export const RESOURCE_URI_PATTERN = /^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/;
/** Environment variable names as POSIX shells accept them. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const LIMITS = {
  tools: 256,
  resources: 1024,
  prompts: 256,
  descriptionLength: 4096,
  timeoutMs: 120_000,
  maxBytes: 16 * 1024 * 1024,
} as const;
