/**
 * The server definition: the spec's build fields (`name`, `template`, `tools`, `resources`,
 * `prompts`) plus mcpctl's extensions that make a definition runnable (handlers, resource
 * sources, prompt messages, auth) and that drive the CLI (`deploy:` defaults, `tests:`).
 *
 * Pure: no IO. The same item schemas are the `/v1/build` wire format (see `src/api/contract.ts`).
 * `docs/definition.md` documents every field. The schemas themselves are in schema-builders.ts,
 * which builds each on first use; here they are all built.
 */
import type { z } from 'zod';
import * as built from './schema-builders.js';

export * from './names.js';
export {
  ContentItem,
  InputSchema,
  ToolAnnotations,
  ToolDefinition,
  ToolHandler,
  toEditorJsonSchema,
} from './schema-builders.js';

export type ContentItem = z.infer<typeof built.ContentItem>;
export type ToolHandler = z.infer<typeof built.ToolHandler>;
export type ToolDefinition = z.infer<typeof built.ToolDefinition>;

export type CompletionFunction = z.infer<ReturnType<typeof built.completionFunction>>;

export const ResourceSource = built.resourceSource();
export type ResourceSource = z.infer<typeof ResourceSource>;
export const ResourceDefinition = built.resourceDefinition();
export type ResourceDefinition = z.infer<typeof ResourceDefinition>;

export const PromptArgument = built.promptArgument();
export const PromptMessage = built.promptMessage();
export const PromptDefinition = built.promptDefinition();
export type PromptDefinition = z.infer<typeof PromptDefinition>;

export const AuthConfig = built.authConfig();
/** Who may call the server: `bearer` (shared tokens), `oauth` (an authorization server's tokens) or `none`. */
export type AuthConfig = z.infer<typeof AuthConfig>;

export const EgressConfig = built.egressConfig();
/** Which private and loopback addresses a deployed server may reach (link-local and metadata: never). */
export type EgressConfig = z.infer<typeof EgressConfig>;

export const ScalingConfig = built.scalingConfig();
export const ResourcesConfig = built.resourcesConfig();
export const DeployDefaults = built.deployDefaults();
export type DeployDefaults = z.infer<typeof DeployDefaults>;

export const TestExpectations = built.testExpectations();
export const TestCase = built.testCase();
export const TestsConfig = built.testsConfig();
export type TestsConfig = z.infer<typeof TestsConfig>;

/** The whole definition. */
export const ServerDefinition = built.serverDefinition();
export type ServerDefinition = z.infer<typeof ServerDefinition>;
/** The definition as written, before defaults are applied. */
export type ServerDefinitionInput = z.input<typeof ServerDefinition>;
