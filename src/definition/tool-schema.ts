/**
 * The schema of a tool: its spec fields (name, description, inputSchema, annotations) and, as an
 * extension, the handler that answers it on the runtime. Built as soon as it is loaded: every
 * definition has tools. Pure: no IO.
 */
import { z } from 'zod';
import { TOOL_NAME_PATTERN } from './names.js';
import { scopeToken } from './auth-schema.js';
import { ContentItem } from './content-schema.js';
import { description, envMap, httpUrl, maxBytes, timeoutMs } from './schema-fields.js';
import { icons } from './listing-schema.js';

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

/** `optional`: a task when the client supports tasks; `required`: only as a task. */
export const TaskSupport = z.enum(['optional', 'required']);

/**
 * When a tool runs as a task (the `io.modelcontextprotocol/tasks` extension). The object form with
 * `start: handler` lets the handler gather input first and call `context.startTask()` itself.
 */
export const ToolTask = z.union([
  TaskSupport,
  z.strictObject({
    support: TaskSupport,
    start: z
      .enum(['call', 'handler'])
      .default('call')
      .describe('call: the task starts with the call; handler: when the handler calls context.startTask()'),
  }),
]);

export const ToolDefinition = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-64 characters of letters, digits, _ or -'),
  title: z.string().optional(),
  description,
  icons,
  inputSchema: InputSchema,
  outputSchema: InputSchema.optional(),
  annotations: ToolAnnotations.optional(),
  handler: ToolHandler.optional(),
  task: ToolTask.optional().describe(
    'run as a task of the io.modelcontextprotocol/tasks extension: optional (when the client supports it) or required',
  ),
  scopes: z
    .array(scopeToken)
    .optional()
    .describe('OAuth scopes a caller needs for this tool, in addition to auth.scopes; needs auth type oauth'),
});
