/**
 * The schemas of src/definition/schema.ts, built as they are first used: the sections a definition
 * file may leave out (resources, prompts, auth, deploy, tests) are built only when the file has
 * them (serverDefinitionFor), since building every zod schema is a good part of what `validate`
 * costs. schema.ts, the public module, builds them all. Pure: no IO.
 */
import { z } from 'zod';
import {
  ENV_NAME_PATTERN,
  ENVIRONMENTS,
  IDENTIFIER_PATTERN,
  LIMITS,
  RESOURCE_URI_PATTERN,
  SERVER_NAME_PATTERN,
  TEMPLATES,
  TOOL_NAME_PATTERN,
} from './names.js';
import { authConfigSchema, scopeToken } from './auth-schema.js';
import { egressConfigSchema } from './egress-schema.js';

/** A schema built on its first use, then kept. */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

const description = z.string().min(1, 'must not be empty').max(LIMITS.descriptionLength);
const timeoutMs = z.number().int().positive().max(LIMITS.timeoutMs).describe('time-out in milliseconds');
const maxBytes = z.number().int().positive().max(LIMITS.maxBytes).describe('largest accepted output, in bytes');
// The base of a URL may come from the environment: `${API_BASE}/items`.
const httpUrl = z
  .string()
  .regex(/^(https?:\/\/|\$\{)/, 'must be an http:// or https:// URL (or start with a ${VAR} reference)');
const envMap = z
  .record(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name'), z.string())
  .describe('environment variables; values may use ${VAR} references');

// ---------------------------------------------------------------------------------------------
// JSON Schema (inputSchema): the spec's shape, validated as real JSON Schema by the semantic checks.

const jsonSchemaProperty = z
  .looseObject({
    type: z
      .union([
        z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']),
        z.array(z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])),
      ])
      .optional(),
    description: z.string().optional(),
  })
  .describe('a JSON Schema for one parameter, such as { type: string }');

export const InputSchema = z
  .looseObject({
    type: z.literal('object', { error: 'inputSchema.type must be "object"' }),
    properties: z.record(z.string().min(1), jsonSchemaProperty).optional(),
    required: z.array(z.string()).optional(),
  })
  .describe('JSON Schema of the tool arguments: type object, properties, required');

// ---------------------------------------------------------------------------------------------
// Content: what tools return and prompts say. Text fields may use {{...}} templates.

const TextContent = z.strictObject({ type: z.literal('text'), text: z.string() });
const JsonContent = z
  .strictObject({ type: z.literal('json'), json: z.unknown() })
  .describe('structured content, also sent as its JSON text');
const MediaContent = (kind: 'image' | 'audio') =>
  z
    .strictObject({
      type: z.literal(kind),
      mimeType: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png'),
      data: z.string().optional().describe('base64 data'),
      path: z.string().optional().describe('file relative to the definition'),
    })
    .refine((c) => (c.data === undefined) !== (c.path === undefined), {
      message: `an ${kind} needs exactly one of data or path`,
    });
const EmbeddedResourceContent = z
  .strictObject({
    type: z.literal('resource'),
    uri: z
      .string()
      .regex(
        new RegExp(`${RESOURCE_URI_PATTERN.source}|\\{\\{`),
        'must be <scheme>://<name>, or a {{...}} template that renders one',
      ),
    mimeType: z.string().optional(),
    text: z.string().optional(),
  })
  .describe('a resource embedded in the result; without text, the defined resource of that uri is read');

// Discriminated on `type`, so a wrong item reports the fields of its own kind, not of every kind.
export const ContentItem = z.discriminatedUnion('type', [
  TextContent,
  JsonContent,
  MediaContent('image'),
  MediaContent('audio'),
  EmbeddedResourceContent,
]);

// ---------------------------------------------------------------------------------------------
// Tool handlers (extension): how a tool answers on the runtime.

const StaticHandler = z
  .strictObject({
    type: z.literal('static'),
    content: z.array(ContentItem).min(1),
  })
  .describe('fixed or templated content');
const ErrorHandler = z
  .strictObject({ type: z.literal('error'), message: z.string().min(1) })
  .describe('always answers with an error result');
/** How long a handler may run, how much it may answer, and how its output is read: fresh schemas for each handler. */
const runLimits = () => ({
  timeout_ms: timeoutMs.default(10_000),
  max_bytes: maxBytes.default(1024 * 1024),
  result: z.enum(['text', 'json']).default('text'),
});
const HttpHandler = z
  .strictObject({
    type: z.literal('http'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    url: httpUrl,
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional().describe('JSON body; strings inside may use templates; default: the arguments'),
    ...runLimits(),
  })
  .describe('calls an HTTP endpoint; template values in the URL are URL-encoded');
const ExecHandler = z
  .strictObject({
    type: z.literal('exec'),
    command: z.array(z.string().min(1)).min(1).describe('argv, run without a shell; arguments arrive as JSON on stdin'),
    cwd: z.string().optional().describe('working directory relative to the definition'),
    env: envMap.optional(),
    ...runLimits(),
  })
  .describe('runs a program; arguments as JSON on stdin, stdout is the result');
const ModuleHandler = z
  .strictObject({
    type: z.literal('module'),
    module: z.string().min(1).describe('JavaScript or TypeScript file relative to the definition'),
    export: z
      .string()
      .regex(/^[A-Za-z_$][\w$]*$/)
      .optional()
      .describe('exported function; default: the tool name'),
    timeout_ms: timeoutMs.default(30_000),
  })
  .describe('calls a function of your own module (template custom)');

export const ToolHandler = z.discriminatedUnion('type', [
  StaticHandler,
  ErrorHandler,
  HttpHandler,
  ExecHandler,
  ModuleHandler,
]);

export const ToolAnnotations = z.strictObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

export const ToolDefinition = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-64 characters of letters, digits, _ or -'),
  title: z.string().optional(),
  description,
  inputSchema: InputSchema,
  outputSchema: InputSchema.optional(),
  annotations: ToolAnnotations.optional(),
  handler: ToolHandler.optional(),
  scopes: z
    .array(scopeToken)
    .optional()
    .describe('OAuth scopes a caller needs for this tool, in addition to auth.scopes; needs auth type oauth'),
});

// ---------------------------------------------------------------------------------------------
// Resources: spec fields plus where the content comes from.

/** What completion/complete offers for a prompt argument or a URI-template variable: listed values, or a module's function. */
export const completionFunction = once(() =>
  z
    .strictObject({
      module: z.string().min(1).describe('JavaScript or TypeScript file relative to the definition (template custom)'),
      export: z
        .string()
        .regex(/^[A-Za-z_$][\w$]*$/, 'must be a JavaScript identifier')
        .describe('exported function (value, context) returning the values, or a promise of them'),
      timeout_ms: timeoutMs.default(5_000),
    })
    .describe('a function of your own module answers completion/complete'),
);
const completion = once(() =>
  z.union([
    z.array(z.string()).max(1000).describe('the values a client may complete to, matched by prefix'),
    completionFunction(),
  ]),
);

export const resourceSource = once(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), text: z.string() }).describe('inline content; may use templates'),
    z
      .strictObject({ type: z.literal('file'), path: z.string().min(1) })
      .describe('a file inside the definition folder; the path may use templates'),
    z
      .strictObject({
        type: z.literal('url'),
        url: httpUrl,
        headers: z.record(z.string(), z.string()).optional(),
        timeout_ms: timeoutMs.default(10_000),
        max_bytes: maxBytes.default(1024 * 1024),
      })
      .describe('fetched when read; template values are URL-encoded'),
  ]),
);

export const resourceDefinition = once(() =>
  z.strictObject({
    uri: z.string().regex(RESOURCE_URI_PATTERN, 'must have the form <scheme>://<name>, for example notes://today'),
    name: z.string().min(1, 'must not be empty'),
    title: z.string().optional(),
    description,
    mimeType: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as text/plain')
      .optional(),
    source: resourceSource().optional(),
    per_user: z.boolean().optional().describe('content depends on the caller: templates may use {{user.id}}'),
    users: z.array(z.string().min(1)).optional().describe('only these user ids may read it'),
    complete: z
      .record(z.string().min(1), completion())
      .optional()
      .describe('what completion/complete offers for each variable of a URI template'),
  }),
);

// ---------------------------------------------------------------------------------------------
// Prompts (the spec does not show their fields; these follow MCP's prompt shape).

export const promptArgument = once(() =>
  z.strictObject({
    name: z.string().regex(IDENTIFIER_PATTERN, 'must be an identifier (letters, digits, _ or -)'),
    description: z.string().optional(),
    required: z.boolean().optional(),
    enum: z
      .array(z.string())
      .min(1, 'list at least one value')
      .max(1000)
      .optional()
      .describe('the only values accepted; completion/complete offers them'),
    complete: completion().optional().describe('what completion/complete offers for this argument (default: its enum)'),
  }),
);

export const promptMessage = once(() =>
  z.strictObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), ContentItem]).describe('text (may use {{args.name}}), or a content item'),
  }),
);

export const promptDefinition = once(() =>
  z.strictObject({
    name: z.string().regex(IDENTIFIER_PATTERN, 'must be an identifier (letters, digits, _ or -)'),
    title: z.string().optional(),
    description: description.optional(),
    arguments: z.array(promptArgument()).optional(),
    messages: z.array(promptMessage()).min(1).optional(),
  }),
);

// ---------------------------------------------------------------------------------------------
// Runtime options (extension): who may call the server (auth-schema.ts).

export const authConfig = once(authConfigSchema);
export const egressConfig = once(egressConfigSchema);

// ---------------------------------------------------------------------------------------------
// CLI-side sections: deploy defaults and test cases. Not sent to /v1/build.

export const scalingConfig = once(() =>
  z.strictObject({
    min_instances: z.number().int().min(0).optional(),
    max_instances: z.number().int().min(1).optional(),
  }),
);

export const resourcesConfig = once(() =>
  z
    .strictObject({
      memory_mb: z.number().int().min(32).max(1_048_576).optional().describe('memory of each instance, in MiB'),
      cpus: z.number().positive().max(1024).optional().describe('CPUs of each instance, such as 0.5'),
    })
    .describe(
      'limits of each instance where the runner enforces them (docker, kubernetes and the Kubernetes export; default 256 MiB and 0.5 CPU)',
    ),
);

const deployTarget = once(() =>
  z.strictObject({
    domain: z
      .string()
      .regex(/^(?=.{1,253}$)([a-zA-Z0-9-]{1,63}\.)*[a-zA-Z0-9-]{1,63}$/, 'must be a host name')
      .optional(),
    scaling: scalingConfig().optional(),
    resources: resourcesConfig().optional(),
    env_vars: envMap.optional(),
  }),
);

export const deployDefaults = once(() =>
  deployTarget().extend({
    environment: z.enum(ENVIRONMENTS).optional().describe('environment used when --env is not given'),
    environments: z
      .partialRecord(z.enum(ENVIRONMENTS), deployTarget())
      .optional()
      .describe('per-environment overrides of domain, scaling and env_vars'),
  }),
);

export const testExpectations = once(() =>
  z.strictObject({
    tools: z.array(z.string()).optional().describe('tools the agent must call; [] for a message that should call none'),
    not_tools: z.array(z.string()).optional().describe('tools the agent must not call'),
    resources: z.array(z.string()).optional().describe('resource URIs the agent must read'),
    response_contains: z.array(z.string()).optional().describe('substrings of the reply (case-insensitive)'),
    min_success_rate: z.number().min(0).max(1).optional(),
  }),
);

export const testCase = once(() =>
  z.strictObject({
    name: z.string().min(1),
    message: z.string().min(1),
    model: z.string().optional(),
    user_id: z.string().optional(),
    expect: testExpectations().optional(),
  }),
);

export const testsConfig = once(() =>
  z.strictObject({
    model: z.string().optional().describe('default AI model for the cases'),
    threshold: z.number().min(0).max(1).default(0.8).describe('success rate below which `mcpctl test` fails'),
    cases: z.array(testCase()).min(1),
  }),
);

// ---------------------------------------------------------------------------------------------
// The whole definition.

/** The sections a definition may leave out: built when first used. */
const sections = {
  auth: once(() => authConfig().optional()),
  egress: once(() => egressConfig().optional()),
  resources: once(() => z.array(resourceDefinition()).max(LIMITS.resources).optional()),
  prompts: once(() => z.array(promptDefinition()).max(LIMITS.prompts).optional()),
  deploy: once(() => deployDefaults().optional()),
  tests: once(() => testsConfig().optional()),
};
type Section = keyof typeof sections;
type Sections = { [K in Section]: ReturnType<(typeof sections)[K]> };
const SECTIONS = Object.keys(sections) as Section[];

function serverDefinitionWith(section: Sections) {
  return z.strictObject({
    $schema: z.string().optional(),
    name: z
      .string()
      .regex(SERVER_NAME_PATTERN, 'must start with a letter or digit; letters, digits, ., _ or -; at most 64'),
    version: z.string().min(1).optional().describe('server version reported to clients; default 0.1.0'),
    description: description.optional(),
    template: z.enum(TEMPLATES),
    instructions: z.string().optional().describe('instructions sent to clients at initialization'),
    auth: section.auth,
    sessions: z
      .boolean()
      .optional()
      .describe(
        'keep a session per client (Mcp-Session-Id): needed for sampling, elicitation, subscriptions and logging levels; default false (stateless)',
      ),
    egress: section.egress,
    include: z
      .array(z.string().min(1))
      .optional()
      .describe('more files or folders to ship with the build, relative to the definition (scripts, data)'),
    tools: z.array(ToolDefinition).max(LIMITS.tools).optional(),
    resources: section.resources,
    prompts: section.prompts,
    deploy: section.deploy,
    tests: section.tests,
  });
}

export type ServerDefinitionSchema = ReturnType<typeof serverDefinitionWith>;

/** The whole schema of a definition, every section built. */
export const serverDefinition = once(() => serverDefinitionWith(sectionsFor(SECTIONS)));

function sectionsFor(present: readonly Section[]): Sections {
  const absent = z.never().optional();
  return Object.fromEntries(
    SECTIONS.map((name) => [name, present.includes(name) ? sections[name]() : absent]),
  ) as unknown as Sections;
}

const withSections = new Map<string, ServerDefinitionSchema>();

/**
 * The schema of a definition for this input: the optional sections the input does not have are
 * a stand-in that only says it is optional, which is all that parsing asks of a field that is
 * absent, so the result and the issues are those of the whole schema (serverDefinition).
 */
export function serverDefinitionFor(input: unknown): ServerDefinitionSchema {
  const present = SECTIONS.filter((name) => input !== null && typeof input === 'object' && Object.hasOwn(input, name));
  if (present.length === SECTIONS.length) return serverDefinition();
  const key = present.join(' ');
  let schema = withSections.get(key);
  if (schema === undefined) {
    schema = serverDefinitionWith(sectionsFor(present));
    withSections.set(key, schema);
  }
  return schema;
}

/**
 * The JSON Schema editors use to complete and check a definition (draft-07, the input side:
 * fields with defaults are optional). `scripts/gen-schema.js` writes it to `schema/`.
 */
export function toEditorJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(serverDefinition(), { target: 'draft-07', io: 'input', unrepresentable: 'any' });
  const { $schema, ...rest } = generated as Record<string, unknown>;
  return {
    $schema,
    title: 'mcpctl server definition',
    description:
      'A server definition for mcpctl: tools, resources and prompts, with handlers, deploy defaults and tests.',
    ...rest,
    // Top-level `x-` keys are ignored by the loader: a place for YAML anchors.
    patternProperties: { '^x-': {} },
  };
}
