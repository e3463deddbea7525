/**
 * The runtime: a definition becomes an MCP server. `createRuntime` compiles the definition once
 * (validators, templates, `${VAR}` references, modules) and returns a Node `(req, res)` handler
 * serving `/mcp` (Streamable HTTP, stateless: a fresh SDK server per request, so any instance can
 * answer any request and nothing leaks between clients) and `/health`. `mcpctl dev` and
 * `serve-bundle` share it; `createServer()` also feeds a stdio connection.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, timingSafeEqual } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  validateHostHeader,
  validateOriginHeader,
  type CallToolResult,
  type Prompt,
  type ServerCapabilities,
  type Tool,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { BuildRequest } from '../api/contract.js';
import { EnvSyntaxError, MissingEnvVarError } from '../definition/errors.js';
import { listEnvRefs, resolveEnvRefs, type Env } from '../definition/interpolate.js';
import { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY } from './constants.js';
import type { CallContext, CompileContext, ResourceContents } from './content.js';
import { redactingLogger, Secrets, silentLogger, type RuntimeLogger } from './logger.js';
import { compilePrompt, type CompiledPrompt } from './prompts.js';
import { compileResources, type ResourceSet } from './resources.js';
import { compileTool, type CompiledTool, type ToolCompileContext } from './tools.js';
import { createSchemaCompiler } from './validate-args.js';

/** What the runtime serves: a build request without its files (those are in `dir`). */
export type RuntimeDefinition = Omit<BuildRequest, 'files'>;

export { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY };
export const DEFAULT_VERSION = '0.1.0';
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_USER_ID_LENGTH = 256;

export interface RuntimeOptions {
  /** folder holding the definition's files (a bundle's `files/`, or the definition's folder) */
  dir: string;
  /** environment for `${VAR}` references (a deployment's env_vars); exec handlers get PATH from it */
  env?: Env;
  logger?: RuntimeLogger;
  /**
   * More values to hide from logs and from the error texts tool calls return, besides what the
   * definition's `${VAR}` references resolve to (which are always hidden): a deployment's
   * environment as a whole.
   */
  secrets?: Iterable<string>;
  /** bearer token required on /mcp, overriding the definition's `auth` */
  token?: string;
  /**
   * Host names accepted in the Host header (DNS rebinding protection). Default: localhost,
   * 127.0.0.1 and [::1]. `false` turns the check off (a server bound to a public interface
   * behind a proxy that sets Host).
   */
  allowedHosts?: string[] | false;
  /** Origin host names accepted from browsers; default: the localhost names; `false`: any */
  allowedOrigins?: string[] | false;
  /** the user id when a request names none (for `mcpctl dev --user-id`) */
  defaultUserId?: string;
  maxBodyBytes?: number;
  /** list_changed support for long-lived connections (stdio) */
  listChanged?: boolean;
}

export interface HealthBody {
  status: 'ok' | 'draining';
  name: string;
  version: string;
  uptime_seconds: number;
  tools: number;
  resources: number;
  prompts: number;
}

export interface Runtime {
  readonly name: string;
  readonly version: string;
  readonly counts: { tools: number; resources: number; prompts: number };
  /** serves /mcp and /health; answers 404 for anything else */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** a fresh SDK server for one connection or request (stdio uses it directly) */
  createServer(options?: CreateServerOptions): Server;
  health(): HealthBody;
  /** requests being served now */
  readonly inFlight: number;
  /** refuses new MCP requests (503) and resolves true once in-flight ones are done, false at the time-out */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** The definition cannot be served as it is: missing variables, files, exports. */
export class RuntimeStartError extends Error {
  override readonly name = 'RuntimeStartError';
  constructor(readonly problems: string[]) {
    super(`the server cannot start: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
  }
}

export interface CreateServerOptions {
  /** the runtime to serve each request from (a newer one after a reload); default: this one */
  follow?: () => Runtime;
}

/** What a request is served from: the compiled parts of one runtime. */
interface Operations {
  tools: Map<string, CompiledTool>;
  toolListing: Tool[];
  resources: ResourceSet;
  prompts: Map<string, CompiledPrompt>;
  promptListing: Prompt[];
  callContext(ctx: ServerContext): CallContext;
  /** an error result with every secret replaced in its text (what the client gets to read) */
  withoutSecrets(result: CallToolResult): CallToolResult;
  traced<T>(rpc: string, target: string | undefined, work: () => Promise<T>, errorOf?: (value: T) => string | undefined): Promise<T>;
}
const operationsOf = new WeakMap<Runtime, Operations>();

/** What the log line of one HTTP request says; filled in as the request is served. */
interface RequestRecord {
  rpc?: string;
  target?: string;
  userId?: string;
  isError?: boolean;
  error?: string;
  params?: unknown;
  result?: unknown;
}

export async function createRuntime(definition: RuntimeDefinition, options: RuntimeOptions): Promise<Runtime> {
  const started = Date.now();
  const env = options.env ?? {};
  const problems: string[] = [];
  // Every value that came from the environment is a secret: hidden from every log line and
  // from the error texts returned to clients. The list grows while the definition compiles.
  const secrets = new Secrets(options.secrets);
  const serverInfo = { name: definition.name, version: definition.version ?? DEFAULT_VERSION };

  const resolveEnv = (value: string, path: string): string => {
    try {
      const resolved = resolveEnvRefs(value, env, path);
      for (const name of listEnvRefs(value)) {
        const set = env[name];
        if (set !== undefined && set !== '') secrets.add(set);
      }
      return resolved;
    } catch (error) {
      if (error instanceof MissingEnvVarError || error instanceof EnvSyntaxError) {
        problems.push(error.message);
        return '';
      }
      throw error;
    }
  };

  let token = options.token;
  if (token === undefined && definition.auth !== undefined) token = resolveEnv(definition.auth.token, 'auth.token');
  if (token !== undefined) secrets.add(token);
  const logger = redactingLogger(options.logger ?? silentLogger, secrets);

  let realDir: string;
  try {
    realDir = await realpath(options.dir);
  } catch {
    throw new RuntimeStartError([`the folder ${options.dir} does not exist`]);
  }
  // embedded resources in tool results read defined resources: bound once those are compiled
  const bound: { resources?: ResourceSet } = {};
  const base: CompileContext = {
    realDir,
    server: serverInfo,
    problems,
    readResource: (uri, call) => {
      if (bound.resources === undefined) throw new Error('resources are not compiled yet');
      return bound.resources.read(uri, call);
    },
  };
  const resources = compileResources(definition.resources ?? [], { ...base, resolveEnv });
  bound.resources = resources;
  const toolContext: ToolCompileContext = {
    ...base,
    resolveEnv,
    compileSchema: createSchemaCompiler(),
    path: env.PATH,
    onInternalError: (tool, error) =>
      logger.log({ level: 'error', event: 'handler_error', tool, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  };
  const tools = new Map<string, CompiledTool>();
  for (const [i, tool] of (definition.tools ?? []).entries()) tools.set(tool.name, await compileTool(tool, `tools[${i}]`, toolContext));
  const prompts = new Map<string, CompiledPrompt>();
  for (const [i, prompt] of (definition.prompts ?? []).entries()) prompts.set(prompt.name, await compilePrompt(prompt, `prompts[${i}]`, base));
  if (problems.length > 0) throw new RuntimeStartError(problems);

  const toolListing = [...tools.values()].map((t) => t.listing);
  const promptListing = [...prompts.values()].map((p) => p.listing);
  const counts = { tools: tools.size, resources: resources.count, prompts: prompts.size };
  const listChanged = options.listChanged === true ? { listChanged: true } : {};
  const capabilities: ServerCapabilities = { logging: {} };
  if (counts.tools > 0 || (counts.resources === 0 && counts.prompts === 0)) capabilities.tools = { ...listChanged };
  if (counts.resources > 0) capabilities.resources = { ...listChanged };
  if (counts.prompts > 0) capabilities.prompts = { ...listChanged };

  const requests = new AsyncLocalStorage<RequestRecord>();

  const callContext = (ctx: ServerContext): CallContext => {
    const userId = userIdOf(ctx) ?? options.defaultUserId;
    const record = requests.getStore();
    if (record !== undefined && userId !== undefined) record.userId = userId;
    return { userId, signal: ctx.mcpReq.signal };
  };
  /**
   * Records the outcome on the HTTP request's log line. Without one (a stdio connection) it logs
   * the MCP request itself. Protocol errors are rethrown as they are.
   */
  const traced = async <T>(rpc: string, target: string | undefined, work: () => Promise<T>, errorOf?: (value: T) => string | undefined): Promise<T> => {
    const outer = requests.getStore();
    const own = outer === undefined;
    const record = outer ?? {};
    const startedAt = process.hrtime.bigint();
    try {
      const value = await (own ? requests.run(record, work) : work());
      const error = errorOf?.(value);
      if (error !== undefined) {
        record.isError = true;
        record.error = error;
      }
      if (logger.debug) record.result = value;
      return value;
    } catch (error) {
      // The client reads this message too (a JSON-RPC error): it must not carry a secret.
      if (error instanceof Error) error.message = secrets.redactText(error.message);
      record.isError = true;
      record.error = error instanceof Error ? error.message : String(error);
      throw error;
    } finally {
      if (own) {
        logger.log({
          level: 'info',
          event: 'request',
          rpc,
          ...(target === undefined ? {} : { target }),
          duration_ms: Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000,
          ...(record.userId === undefined ? {} : { user_id: record.userId }),
          ...(record.isError === true ? { is_error: true } : {}),
          ...(record.error === undefined ? {} : { error: record.error }),
          ...(logger.debug && record.result !== undefined ? { result: record.result } : {}),
        });
      }
    }
  };

  /** A tool's failure is read by the client and by a model: its text loses every secret (an exec program's stderr may quote one). */
  const withoutSecrets = (result: CallToolResult): CallToolResult => {
    if (result.isError !== true || secrets.size === 0) return result;
    return { ...result, content: result.content.map((block) => (block.type === 'text' ? { ...block, text: secrets.redactText(block.text) } : block)) };
  };

  const ops: Operations = { tools, toolListing, resources, prompts, promptListing, callContext, withoutSecrets, traced };
  const createServer = (serverOptions: CreateServerOptions = {}): Server => {
    // a long-lived (stdio) connection follows the newest runtime after a reload
    const live = (): Operations => {
      const current = serverOptions.follow?.();
      return (current === undefined ? undefined : operationsOf.get(current)) ?? ops;
    };
    const server = new Server(serverInfo, {
      capabilities,
      ...(definition.instructions === undefined ? {} : { instructions: definition.instructions }),
    });
    if (capabilities.tools !== undefined) {
      server.setRequestHandler('tools/list', () => live().traced('tools/list', undefined, async () => ({ tools: live().toolListing })));
      server.setRequestHandler('tools/call', async (request, ctx) => {
        const op = live();
        const tool = op.tools.get(request.params.name);
        if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
        const result: CallToolResult = await op.traced(
          'tools/call',
          tool.name,
          async () => op.withoutSecrets(await tool.call(request.params.arguments, op.callContext(ctx))),
          errorTextOf,
        );
        return server.projectCallToolResult(result, tool.listing.outputSchema);
      });
    }
    if (capabilities.resources !== undefined) {
      server.setRequestHandler('resources/list', (_request, ctx) => {
        const op = live();
        return op.traced('resources/list', undefined, async () => ({ resources: op.resources.list(op.callContext(ctx).userId) }));
      });
      server.setRequestHandler('resources/templates/list', (_request, ctx) => {
        const op = live();
        return op.traced('resources/templates/list', undefined, async () => ({ resourceTemplates: op.resources.listTemplates(op.callContext(ctx).userId) }));
      });
      server.setRequestHandler('resources/read', async (request, ctx) => {
        const op = live();
        const contents: ResourceContents[] = await op.traced('resources/read', request.params.uri, () => op.resources.read(request.params.uri, op.callContext(ctx)));
        return { contents };
      });
    }
    if (capabilities.prompts !== undefined) {
      server.setRequestHandler('prompts/list', () => live().traced('prompts/list', undefined, async () => ({ prompts: live().promptListing })));
      server.setRequestHandler('prompts/get', async (request, ctx) => {
        const op = live();
        const prompt = op.prompts.get(request.params.name);
        if (prompt === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
        return op.traced('prompts/get', prompt.listing.name, () => prompt.get(request.params.arguments, op.callContext(ctx)));
      });
    }
    return server;
  };

  const mcp = createMcpHandler(() => createServer(), {
    onerror: (error) => logger.log({ level: 'warn', event: 'mcp_error', error: error.message }),
  });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const serveMcp = toNodeHandler(mcp, { maxRequestBodySize: maxBodyBytes });
  const allowedHosts = options.allowedHosts === false ? undefined : (options.allowedHosts ?? localhostAllowedHostnames());
  const allowedOrigins = options.allowedOrigins === false ? undefined : (options.allowedOrigins ?? localhostAllowedOrigins());
  const tokenDigest = token === undefined ? undefined : sha256(token);

  let inFlight = 0;
  let draining = false;
  const idleWaiters = new Set<() => void>();
  const done = (): void => {
    inFlight -= 1;
    if (inFlight === 0) for (const wake of idleWaiters) wake();
  };

  const health = (): HealthBody => ({
    status: draining ? 'draining' : 'ok',
    name: serverInfo.name,
    version: serverInfo.version,
    uptime_seconds: Math.round((Date.now() - started) / 1000),
    ...counts,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse, record: RequestRecord): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (allowedHosts !== undefined) {
      const host = validateHostHeader(req.headers.host, allowedHosts);
      if (!host.ok) return rejectRequest(res, record, 403, `Forbidden: ${host.message}`);
    }
    if (allowedOrigins !== undefined) {
      const origin = validateOriginHeader(req.headers.origin, allowedOrigins);
      if (!origin.ok) return rejectRequest(res, record, 403, `Forbidden: ${origin.message}`);
      if (origin.origin !== undefined) setCorsHeaders(res, origin.origin);
    } else if (typeof req.headers.origin === 'string') setCorsHeaders(res, req.headers.origin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      const body = health();
      sendJson(res, draining ? 503 : 200, body);
      return;
    }
    if (path !== MCP_PATH) return sendJson(res, 404, { error: `not found: ${path}; the MCP endpoint is ${MCP_PATH}, health is ${HEALTH_PATH}` });
    if (draining) {
      res.setHeader('connection', 'close');
      return rejectRequest(res, record, 503, 'Service Unavailable: the server is shutting down');
    }
    if (tokenDigest !== undefined) {
      const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
      if (given === undefined || !timingSafeEqual(sha256(given), tokenDigest)) {
        res.setHeader('www-authenticate', 'Bearer realm="mcp"');
        return rejectRequest(res, record, 401, given === undefined ? 'Unauthorized: send Authorization: Bearer <token>' : 'Unauthorized: the bearer token is not valid');
      }
    }
    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, maxBodyBytes);
      if (raw === undefined) return rejectRequest(res, record, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        record.error = 'parse error';
        return sendJson(res, 400, { jsonrpc: '2.0', error: { code: ProtocolErrorCode.ParseError, message: 'Parse error: the body is not JSON' }, id: null });
      }
      describeMessage(body, record, logger.debug);
    }
    await requests.run(record, () => serveMcp(req, res, body));
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = process.hrtime.bigint();
    const record: RequestRecord = {};
    const headerUser = req.headers[USER_ID_HEADER];
    if (typeof headerUser === 'string' && headerUser !== '') record.userId = headerUser;
    inFlight += 1;
    res.once('close', () => {
      done();
      const entry = {
        level: 'info' as const,
        event: 'request',
        method: req.method,
        path: (req.url ?? '/').split('?')[0],
        status: res.statusCode,
        duration_ms: Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000,
        ...(record.rpc === undefined ? {} : { rpc: record.rpc }),
        ...(record.target === undefined ? {} : { target: record.target }),
        ...(record.userId === undefined ? {} : { user_id: record.userId }),
        ...(record.isError === true ? { is_error: true } : {}),
        ...(record.error === undefined ? {} : { error: record.error }),
        ...(logger.debug && record.params !== undefined ? { params: record.params } : {}),
        ...(logger.debug && record.result !== undefined ? { result: record.result } : {}),
      };
      logger.log(entry);
    });
    handle(req, res, record).catch((error: unknown) => {
      logger.log({ level: 'error', event: 'internal_error', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: ProtocolErrorCode.InternalError, message: 'Internal error' }, id: null });
      else res.destroy();
    });
  };

  const self: Runtime = {
    name: serverInfo.name,
    version: serverInfo.version,
    counts,
    handler,
    createServer,
    health,
    get inFlight() {
      return inFlight;
    },
    drain(timeoutMs) {
      draining = true;
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const finish = (drained: boolean): void => {
          clearTimeout(timer);
          idleWaiters.delete(wake);
          resolve(drained);
        };
        const wake = (): void => finish(true);
        const timer = setTimeout(() => finish(false), timeoutMs);
        idleWaiters.add(wake);
      });
    },
    async close() {
      draining = true;
      await mcp.close();
    },
  };
  operationsOf.set(self, ops);
  return self;
}

/** The caller's user id: `_meta["mcpctl/user_id"]` of the request, else the X-MCP-User-Id header. */
export function userIdOf(ctx: ServerContext): string | undefined {
  const fromMeta = ctx.mcpReq._meta?.[USER_ID_META_KEY];
  const fromHeader = ctx.http?.req?.headers.get(USER_ID_HEADER) ?? undefined;
  const id = typeof fromMeta === 'string' && fromMeta !== '' ? fromMeta : fromHeader === '' ? undefined : fromHeader;
  if (id === undefined) return undefined;
  if (id.length > MAX_USER_ID_LENGTH || /\p{Cc}/u.test(id)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The user id must be 1-${MAX_USER_ID_LENGTH} characters without control characters`);
  }
  return id;
}

/** Notes the JSON-RPC method and its target (tool, uri, prompt) for the log line. */
function describeMessage(body: unknown, record: RequestRecord, debug: boolean): void {
  if (Array.isArray(body)) {
    record.rpc = 'batch';
    return;
  }
  if (body === null || typeof body !== 'object') return;
  const message = body as { method?: unknown; params?: { name?: unknown; uri?: unknown; _meta?: Record<string, unknown> } };
  if (typeof message.method === 'string') record.rpc = message.method;
  else if ('result' in message || 'error' in message) record.rpc = 'response';
  const target = message.params?.name ?? message.params?.uri;
  if (typeof target === 'string') record.target = target;
  const metaUser = message.params?._meta?.[USER_ID_META_KEY];
  if (typeof metaUser === 'string' && metaUser !== '') record.userId = metaUser;
  if (debug && message.params !== undefined) record.params = message.params;
}

/** The text of an error result, shortened for a log line; undefined for a success. */
function errorTextOf(result: CallToolResult): string | undefined {
  if (result.isError !== true) return undefined;
  const first = result.content[0];
  const text = first?.type === 'text' ? first.text : 'error result';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function rejectRequest(res: ServerResponse, record: RequestRecord, status: number, message: string): void {
  record.error = message;
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

function setCorsHeaders(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  res.setHeader('access-control-allow-headers', 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-mcp-user-id');
  res.setHeader('access-control-expose-headers', 'mcp-protocol-version, mcp-session-id, www-authenticate');
}

/** The whole body, or undefined past the limit. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
