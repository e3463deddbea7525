/**
 * Tools: each definition's tool compiled once (argument validator, templates, resolved `${VAR}`
 * references, loaded module) into a listing and a `call` that never throws for a bad call: invalid
 * arguments and handler failures become `isError` results the model can read and correct.
 */
import { scanHeaderParams, type HeaderParam } from '../../definition/header-params.js';
import type { CallToolResult, ContentBlock, Tool } from '@modelcontextprotocol/server';
import { isCallToolResult, ProtocolError } from '@modelcontextprotocol/server';
import { FAILURE_META, type CallFailure } from '../../api/guidance.js';
import type { ToolDefinition, ToolHandler } from '../../definition/schema.js';
import { compileContent, messageOf, type CallContext, type CompileContext, type ContentRenderer } from './content.js';
import { renderUrl, UrlValueError } from './egress-url.js';
import { callHttp, describeUrl, HttpCallError } from './http-call.js';
import { loadModuleFunction, runWithDeadline } from './module-function.js';
import { PeerUnavailableError, type Peer } from './peer.js';
import { ExecError, runExec } from './run-exec.js';
import { protocolFailureOf } from './task-run.js';
import { resolveRealInside } from './safe-path.js';
import { compileDeep, compileTemplate, type TemplateScope } from '../../definition/template.js';
import type { Validator } from './validate-args.js';

export interface CompiledTool {
  name: string;
  listing: Tool;
  /** arguments a 2026-07-28 client also sends as `Mcp-Param-*` headers (param-headers.ts) */
  headerParams: HeaderParam[];
  /** runs as a task of the tasks extension (tasks.ts) */
  task?: ToolTask;
  /**
   * its call may talk to the client (a module's context: questions, logs, progress) or runs as a
   * task; a declarative handler never does, so its calls skip the peer and the input rounds
   */
  talksToClient: boolean;
  call(args: unknown, call: CallContext): Promise<CallToolResult>;
}

/** A tool's `task:`, in full: whether it needs a task, and when the task starts. */
export interface ToolTask {
  support: 'optional' | 'required';
  start: 'call' | 'handler';
}

function taskOf(task: ToolDefinition['task']): ToolTask | undefined {
  if (task === undefined) return undefined;
  return typeof task === 'string' ? { support: task, start: 'call' } : task;
}

/** What tool compilation needs beyond the shared context. */
export interface ToolCompileContext extends CompileContext {
  compileSchema(schema: Record<string, unknown>): Validator;
  /** resolves `${VAR}` references at start-up; records a problem and returns '' when one is missing */
  resolveEnv(value: string, path: string): string;
  /** the runtime's PATH, the only variable exec handlers inherit */
  path: string | undefined;
  /** an unexpected failure inside a handler (a bug, not a bad call): logged, hidden from the caller */
  onInternalError(tool: string, error: unknown): void;
}

type Run = (scope: TemplateScope, call: CallContext) => Promise<CallToolResult>;

/** A failure the caller may read: its message becomes the error result's text. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  constructor(
    message: string,
    /** how the handler failed */
    readonly failure: CallFailure = { kind: 'thrown' },
  ) {
    super(message);
  }
}

export function errorResult(text: string, failure: CallFailure = { kind: 'thrown' }): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true, _meta: { [FAILURE_META]: failure } };
}

/** How a handler's error failed: an HTTP status, an exit code, a time-out, or a thrown error. */
function failureOf(error: ToolFailure | HttpCallError | ExecError): CallFailure {
  if (error instanceof ToolFailure) return error.failure;
  return error.timedOut ? { kind: 'timeout' } : { kind: 'thrown' };
}

export async function compileTool(tool: ToolDefinition, where: string, ctx: ToolCompileContext): Promise<CompiledTool> {
  let validate: Validator;
  try {
    validate = ctx.compileSchema(tool.inputSchema);
  } catch (error) {
    ctx.problems.push({ path: `${where}.inputSchema`, message: `not a valid JSON Schema: ${messageOf(error)}` });
    validate = (value) => ({ ok: true, value: (value ?? {}) as Record<string, unknown> });
  }
  let validateOutput: Validator | undefined;
  if (tool.outputSchema !== undefined) {
    try {
      validateOutput = ctx.compileSchema(tool.outputSchema);
    } catch (error) {
      ctx.problems.push({ path: `${where}.outputSchema`, message: `not a valid JSON Schema: ${messageOf(error)}` });
    }
  }
  const run = await compileHandler(tool, `${where}.handler`, ctx);
  const task = taskOf(tool.task);
  if (task?.start === 'handler' && tool.handler?.type !== 'module')
    ctx.problems.push({ path: `${where}.task.start`, message: 'start: handler needs a module handler' });
  const listing: Tool = {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    ...(tool.icons === undefined ? {} : { icons: tool.icons }),
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  };

  return {
    name: tool.name,
    listing,
    headerParams: scanHeaderParams(tool.inputSchema).params,
    ...(task === undefined ? {} : { task }),
    talksToClient: task !== undefined || tool.handler?.type === 'module',
    async call(args, call) {
      const checked = validate(args);
      if (!checked.ok)
        return errorResult(`Invalid arguments for tool "${tool.name}": ${checked.problems.join('; ')}.`, {
          kind: 'arguments',
        });
      const scope: TemplateScope = { args: checked.value, user: { id: call.userId }, server: ctx.server };
      let result: CallToolResult;
      try {
        result = await run(scope, call);
      } catch (error) {
        if (error instanceof ToolFailure || error instanceof HttpCallError || error instanceof ExecError) {
          return errorResult(`Tool "${tool.name}" failed: ${error.message}`, failureOf(error));
        }
        if (error instanceof ProtocolError) throw error;
        ctx.onInternalError(tool.name, error);
        return errorResult(`Tool "${tool.name}" failed with an internal error; the server log has the details.`);
      }
      if (validateOutput === undefined || result.isError === true) return result;
      return checkOutput(tool.name, result, validateOutput);
    },
  };
}

/** A tool with an outputSchema returns structured content that matches it. */
function checkOutput(name: string, result: CallToolResult, validate: Validator): CallToolResult {
  let structured = result.structuredContent;
  if (structured === undefined) {
    const text = result.content.length === 1 && result.content[0]?.type === 'text' ? result.content[0].text : undefined;
    try {
      structured = text === undefined ? undefined : JSON.parse(text);
    } catch {
      structured = undefined;
    }
  }
  if (structured === null || typeof structured !== 'object' || Array.isArray(structured)) {
    return errorResult(`Tool "${name}" has an outputSchema, but its result is not a JSON object.`);
  }
  const checked = validate(structured);
  if (!checked.ok)
    return errorResult(`The result of tool "${name}" does not match its outputSchema: ${checked.problems.join('; ')}.`);
  return { ...result, structuredContent: checked.value };
}

async function compileHandler(tool: ToolDefinition, where: string, ctx: ToolCompileContext): Promise<Run> {
  const handler: ToolHandler | undefined = tool.handler;
  if (handler === undefined) {
    // honest: the model learns the tool cannot run, instead of receiving invented output
    return async () =>
      errorResult(`Tool "${tool.name}" has no handler in its server definition, so it cannot run yet.`);
  }
  switch (handler.type) {
    case 'static':
      return compileStatic(handler.content, where, ctx);
    case 'error': {
      const message = compileTemplate(handler.message);
      return async (scope) => errorResult(message.render(scope));
    }
    case 'http':
      return compileHttp(handler, where, ctx);
    case 'exec':
      return compileExec(tool.name, handler, where, ctx);
    case 'module':
      return compileModule(tool.name, handler, where, ctx);
  }
}

async function compileStatic(
  items: Extract<ToolHandler, { type: 'static' }>['content'],
  where: string,
  ctx: ToolCompileContext,
): Promise<Run> {
  const renderers: ContentRenderer[] = [];
  for (const [i, item] of items.entries()) renderers.push(await compileContent(item, `${where}.content[${i}]`, ctx));
  return async (scope, call) => {
    const content: ContentBlock[] = [];
    let structured: unknown;
    for (const render of renderers) {
      const rendered = await render(scope, call).catch((error: unknown) => {
        throw new ToolFailure(messageOf(error));
      });
      content.push(rendered.block);
      if (structured === undefined && 'structured' in rendered) structured = rendered.structured;
    }
    return withStructured({ content }, structured);
  };
}

/** structuredContent is an object on the wire; other JSON values travel as text only. */
function withStructured(result: CallToolResult, value: unknown): CallToolResult {
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return { ...result, structuredContent: value };
  return result;
}

function resultFromOutput(text: string, kind: 'text' | 'json', source: string): CallToolResult {
  if (kind === 'text') return { content: [{ type: 'text', text }] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ToolFailure(`${source} did not return valid JSON: ${text.slice(0, 200)}`);
  }
  return withStructured({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] }, value);
}

function compileHttp(handler: Extract<ToolHandler, { type: 'http' }>, where: string, ctx: ToolCompileContext): Run {
  const url = compileTemplate(ctx.resolveEnv(handler.url, `${where}.url`));
  const headers = Object.entries(handler.headers ?? {}).map(
    ([name, value]) => [name, compileTemplate(ctx.resolveEnv(value, `${where}.headers.${name}`))] as const,
  );
  const body = handler.body === undefined ? (scope: TemplateScope) => scope.args : compileDeep(handler.body);
  const sendsBody = handler.method !== 'GET' && handler.method !== 'DELETE';
  return async (scope, call) => {
    let target: string;
    try {
      target = renderUrl(url, scope);
    } catch (error) {
      if (error instanceof UrlValueError) throw new ToolFailure(`refused: ${error.message}`, { kind: 'arguments' });
      throw error;
    }
    const sent: Record<string, string> = { accept: handler.result === 'json' ? 'application/json' : '*/*' };
    if (sendsBody) sent['content-type'] = 'application/json';
    for (const [name, value] of headers) sent[name.toLowerCase()] = value.render(scope).replace(/[\r\n]/g, ' ');
    const response = await callHttp({
      method: handler.method,
      url: target,
      headers: sent,
      ...(sendsBody ? { body: JSON.stringify(body(scope) ?? {}) } : {}),
      timeoutMs: handler.timeout_ms,
      maxBytes: handler.max_bytes,
      signal: call.signal,
      egress: ctx.egress,
    });
    const text = response.body.toString('utf8');
    if (response.status >= 400) {
      throw new ToolFailure(
        `${handler.method} ${describeUrl(target)} answered ${response.status} ${response.statusText}${text === '' ? '' : `: ${text.slice(0, 500)}`}`,
        {
          kind: 'http_status',
          status: response.status,
        },
      );
    }
    return resultFromOutput(text, handler.result, `${handler.method} ${describeUrl(target)}`);
  };
}

async function compileExec(
  name: string,
  handler: Extract<ToolHandler, { type: 'exec' }>,
  where: string,
  ctx: ToolCompileContext,
): Promise<Run> {
  const env: Record<string, string> = {};
  if (ctx.path !== undefined) env.PATH = ctx.path;
  for (const [key, value] of Object.entries(handler.env ?? {})) env[key] = ctx.resolveEnv(value, `${where}.env.${key}`);
  const cwd = await resolveRealInside(ctx.realDir, handler.cwd ?? '.').catch((error: unknown) => {
    ctx.problems.push({ path: `${where}.cwd`, message: messageOf(error) });
    return ctx.realDir;
  });
  const program = handler.command[0]!;
  return async (scope, call) => {
    const result = await runExec({
      command: handler.command,
      cwd,
      env: { ...env, MCPCTL_TOOL: name, ...(call.userId === undefined ? {} : { MCPCTL_USER_ID: call.userId }) },
      input: JSON.stringify(scope.args ?? {}),
      timeoutMs: handler.timeout_ms,
      maxBytes: handler.max_bytes,
      signal: call.signal,
    });
    if (result.code !== 0) {
      const how = result.signal === null ? `exited with code ${result.code}` : `was ended by ${result.signal}`;
      const detail = (result.stderr.trim() || result.stdout.toString('utf8').trim()).slice(-1000);
      throw new ToolFailure(
        `${program} ${how}${detail === '' ? '' : `: ${detail}`}`,
        result.signal === null
          ? { kind: 'exit_code', exit_code: result.code ?? -1 }
          : { kind: 'exit_code', signal: result.signal },
      );
    }
    return resultFromOutput(result.stdout.toString('utf8'), handler.result, program);
  };
}

/** What a module's function receives besides the arguments: who calls, and the client to talk to while it runs. */
export interface ModuleToolContext extends Peer {
  tool: string;
  user: { id: string | undefined };
  server: { name: string; version: string };
  /** aborts on cancellation or time-out */
  signal: AbortSignal;
}

/** Outside a client's request (no peer): logs and progress go nowhere, questions cannot be asked. */
const NO_PEER: Peer = {
  log: async () => {},
  progress: async () => {},
  sample: async () => {
    throw new PeerUnavailableError('sampling needs a client connection');
  },
  elicit: async () => {
    throw new PeerUnavailableError('elicitation needs a client connection');
  },
  elicitUrl: async () => {
    throw new PeerUnavailableError('elicitation needs a client connection');
  },
  roots: async () => {
    throw new PeerUnavailableError('roots need a client connection');
  },
  clientCapabilities: () => ({}),
  closeStream: () => {},
  resourceUpdated: async () => {},
};

type ModuleFunction = (args: Record<string, unknown>, context: ModuleToolContext) => unknown;

async function compileModule(
  name: string,
  handler: Extract<ToolHandler, { type: 'module' }>,
  where: string,
  ctx: ToolCompileContext,
): Promise<Run> {
  const exportName = handler.export ?? name;
  const loaded = await loadModuleFunction<Parameters<ModuleFunction>>(
    ctx.realDir,
    handler.module,
    exportName,
    handler.export === undefined ? ' (the tool name; set handler.export to use another)' : '',
  );
  if ('problem' in loaded) ctx.problems.push({ path: where, message: loaded.problem });
  const fn = 'fn' in loaded ? loaded.fn : undefined;
  return async (scope, call) => {
    if (fn === undefined) throw new ToolFailure('its module could not be loaded');
    try {
      const value = await runWithDeadline(
        (signal) =>
          fn(
            { ...scope.args },
            { ...(call.peer ?? NO_PEER), tool: name, user: { id: call.userId }, server: ctx.server, signal },
          ),
        call.signal,
        handler.timeout_ms,
        () =>
          new ToolFailure(`${exportName}() did not finish within ${handler.timeout_ms} ms (time-out)`, {
            kind: 'timeout',
          }),
      );
      return toCallResult(value, exportName);
    } catch (error) {
      if (error instanceof ToolFailure) throw error;
      // an error with a JSON-RPC code is a protocol error the module raises on purpose
      const failure = protocolFailureOf(error);
      if (failure !== undefined) throw new ProtocolError(failure.code, failure.message);
      // the module's own error is the tool's answer, as a thrown error in a tool should be
      throw new ToolFailure(error instanceof Error ? error.message : String(error));
    }
  };
}

/** A module may return a string, a full CallToolResult, or any JSON value (structured content). */
export function toCallResult(value: unknown, source: string): CallToolResult {
  if (value === undefined || value === null) return { content: [] };
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  if (typeof value === 'object' && 'content' in value) {
    if (isCallToolResult(value)) return value;
    throw new ToolFailure(`${source}() returned an object with "content" that is not a valid tool result`);
  }
  let text: string;
  try {
    text = JSON.stringify(value, null, 2);
  } catch (error) {
    throw new ToolFailure(`${source}() returned a value that is not JSON: ${messageOf(error)}`);
  }
  return withStructured({ content: [{ type: 'text', text }] }, value);
}
