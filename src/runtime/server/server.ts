/**
 * The runtime: a definition becomes an MCP server. `createRuntime` compiles the definition once
 * (validators, templates, `${VAR}` references, modules) and returns a Node `(req, res)` handler
 * serving `/mcp` (Streamable HTTP) and `/health`. Stateless by default: a fresh SDK server per
 * request, so any instance can answer any request and nothing leaks between clients. A
 * definition with `sessions: true` keeps a session per client as well (`sessions.ts`), for
 * what needs one: sampling, elicitation, subscriptions, logging levels, the GET stream.
 * `mcpctl dev` and `serve-bundle` share it; `createServer()` also feeds a stdio connection.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  localhostAllowedHostnames,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { BuildRequest } from '../../api/contract.js';
import { EnvSyntaxError, MissingEnvVarError } from '../../definition/errors.js';
import { listEnvRefs, resolveEnvRefs, type Env } from '../../definition/interpolate.js';
import { problemText, type Problem } from '../../shared/errors.js';
import { originsFromEnv } from '../../shared/origins.js';
import { createGuard, guardOptionsFromEnv, resolveAuth, type ResolvedAuth } from './auth.js';
import { compileCompletions } from './completions.js';
import { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY } from '../constants.js';
import type { CallContext, CompileContext } from './content.js';
import { createEgress } from './egress.js';
import { createHttpFront, rejectDraining, type HealthBody, type McpServe } from './http-front.js';
import { redactingLogger, Secrets, silentLogger, type RuntimeLogger } from './logger.js';
import { buildServer, type Operations, type ServerShape } from './mcp-server.js';
import { createPeer } from './peer.js';
import { compilePrompt, type CompiledPrompt } from './prompts.js';
import { compileResources } from './resources.js';
import { SessionStore } from './sessions.js';
import { Subscribers, type Connection } from './subscriptions.js';
import { compileTool, type CompiledTool, type ToolCompileContext } from './tools.js';
import { createTracer } from './tracing.js';
import { createSchemaCompiler } from './validate-args.js';

/** What the runtime serves: a build request without its files (those are in `dir`). */
export type RuntimeDefinition = Omit<BuildRequest, 'files'>;

export { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY };
export type { HealthBody };
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
  /** exact origins (`http://localhost:6274`) whose pages may call; default: MCPCTL_ALLOWED_ORIGINS of `env`, else none; `false`: any */
  allowedOrigins?: string[] | false;
  /** the user id when a request names none (for `mcpctl dev --user-id`) */
  defaultUserId?: string;
  maxBodyBytes?: number;
  /** the lists may change while a connection lives (a reloading `mcpctl dev`): declare list_changed to sessions and stdio */
  listChanged?: boolean;
  /** a session unused this long is closed (default 10 minutes) */
  sessionIdleMs?: number;
  /** the runtime this one replaces (a reload): its sessions and connections move to this one */
  adopt?: Runtime;
  /**
   * `http` handlers and `url` resources may reach private and loopback addresses without the
   * definition's `egress` (`mcpctl dev`, on the developer's machine). Default false: every other
   * way a runtime starts (serve-bundle in every runner) applies the definition's policy.
   */
  allowPrivateEgress?: boolean;
}

export interface Runtime {
  readonly name: string;
  readonly version: string;
  readonly counts: { tools: number; resources: number; prompts: number };
  /** keeps a session per client (the definition's `sessions: true`) */
  readonly sessions: boolean;
  /** serves /mcp and /health; answers 404 for anything else */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** a fresh SDK server for one long-lived connection (stdio uses it directly) */
  createServer(options?: CreateServerOptions): Server;
  health(): HealthBody;
  /** requests being served now (an open session stream is one) */
  readonly inFlight: number;
  /**
   * Refuses new MCP requests and new sessions (503), keeps serving open sessions, and resolves
   * true once in-flight requests are done and every session has ended, false at the time-out.
   */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** The definition cannot be served as it is: missing variables, files, exports. */
export class RuntimeStartError extends Error {
  override readonly name = 'RuntimeStartError';
  /** the same problems as lines of text (`tools[0].handler: …`), for people */
  readonly problems: string[];
  constructor(readonly details: Problem[]) {
    const problems = details.map(problemText);
    super(`the server cannot start: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
    this.problems = problems;
  }
}

export interface CreateServerOptions {
  /** the runtime to serve each request from (a newer one after a reload); default: this one */
  follow?: () => Runtime;
}

/** What a runtime hands over to the one that replaces it. */
interface Internals {
  ops: Operations;
  store: SessionStore | undefined;
  /** from now on, connections of this runtime are served by `next` */
  succeed(next: Runtime): void;
}
const internalsOf = new WeakMap<Runtime, Internals>();

export async function createRuntime(definition: RuntimeDefinition, options: RuntimeOptions): Promise<Runtime> {
  const started = Date.now();
  const env = options.env ?? {};
  const problems: Problem[] = [];
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
        problems.push({ message: error.message });
        return '';
      }
      throw error;
    }
  };

  const auth: ResolvedAuth | undefined =
    options.token !== undefined
      ? { type: 'bearer', tokens: [options.token] }
      : resolveAuth(definition.auth, definition.tools ?? [], resolveEnv);
  if (auth?.type === 'bearer') for (const token of auth.tokens) secrets.add(token);
  const guard =
    auth === undefined ? undefined : createGuard(auth, { ...guardOptionsFromEnv(env), resourceName: definition.name });
  const logger = redactingLogger(options.logger ?? silentLogger, secrets);

  let realDir: string;
  try {
    realDir = await realpath(options.dir);
  } catch {
    throw new RuntimeStartError([{ message: `the folder ${options.dir} does not exist` }]);
  }
  // embedded resources in tool results read defined resources: bound once those are compiled
  const bound: { resources?: Operations['resources'] } = {};
  const egress = createEgress(definition.egress, {
    allowPrivate: options.allowPrivateEgress === true,
    report: (report) => {
      if (report.refused !== undefined) logger.log({ level: 'warn', event: 'egress_refused', ...report });
    },
  });
  const base: CompileContext = {
    realDir,
    server: serverInfo,
    problems,
    egress,
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
      logger.log({
        level: 'error',
        event: 'handler_error',
        tool,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  };
  const tools = new Map<string, CompiledTool>();
  for (const [i, tool] of (definition.tools ?? []).entries())
    tools.set(tool.name, await compileTool(tool, `tools[${i}]`, toolContext));
  const prompts = new Map<string, CompiledPrompt>();
  for (const [i, prompt] of (definition.prompts ?? []).entries())
    prompts.set(prompt.name, await compilePrompt(prompt, `prompts[${i}]`, base));
  const completions = await compileCompletions(definition.prompts ?? [], definition.resources ?? [], base);
  if (problems.length > 0) throw new RuntimeStartError(problems);

  const counts = { tools: tools.size, resources: resources.count, prompts: prompts.size };
  const capabilities: ServerCapabilities = { logging: {} };
  if (counts.tools > 0 || (counts.resources === 0 && counts.prompts === 0)) capabilities.tools = {};
  if (counts.resources > 0) capabilities.resources = {};
  if (counts.prompts > 0) capabilities.prompts = {};
  if (completions.any) capabilities.completions = {};
  const shape: ServerShape = {
    info: serverInfo,
    instructions: definition.instructions,
    capabilities,
    listChanged: options.listChanged === true,
  };

  const tracer = createTracer(logger, secrets);
  const subscribers = new Subscribers((uri) => {
    const file = resources.fileOf(uri);
    return file === undefined ? undefined : join(realDir, file);
  });

  const callContext = (
    ctx: ServerContext,
    peer?: { server: Server; tool: string; interactive: boolean },
  ): CallContext => {
    const record = tracer.requests.getStore();
    // Over HTTP to a server with auth, the identity is the validated token's and nothing else;
    // stdio (a local connection) and a server without auth take the one the request names.
    const userId =
      guard !== undefined && (record !== undefined || ctx.http?.req !== undefined)
        ? record?.userId
        : (userIdOf(ctx) ?? options.defaultUserId);
    if (record !== undefined && userId !== undefined) record.userId = userId;
    return {
      userId,
      signal: ctx.mcpReq.signal,
      ...(peer === undefined
        ? {}
        : { peer: createPeer(ctx, { ...peer, resourceUpdated: (uri) => current().subscribers.updated(uri) }) }),
    };
  };

  /** A tool's failure is read by the client and by a model: its text loses every secret (an exec program's stderr may quote one). */
  const withoutSecrets = (result: CallToolResult): CallToolResult => {
    if (result.isError !== true || secrets.size === 0) return result;
    return {
      ...result,
      content: result.content.map((block) =>
        block.type === 'text' ? { ...block, text: secrets.redactText(block.text) } : block,
      ),
    };
  };

  const ops: Operations = {
    tools,
    toolListing: [...tools.values()].map((t) => t.listing),
    resources,
    prompts,
    promptListing: [...prompts.values()].map((p) => p.listing),
    completions,
    subscribers,
    callContext,
    withoutSecrets,
    traced: tracer.traced,
  };
  // sessions and stdio connections adopted after a reload follow the newest runtime
  let successor: Runtime | undefined;
  const current = (): Operations => (successor === undefined ? ops : (internalsOf.get(successor)?.ops ?? ops));

  /** A long-lived connection (stdio, a session): it may subscribe, and it hears about changes. */
  const connect = (connection: Connection, follow: () => Operations): Server => {
    const server = buildServer(follow, shape, connection);
    connection.server = server;
    return server;
  };

  const store =
    definition.sessions === true
      ? new SessionStore({
          createServer: (connection) => connect(connection, current),
          onOpen: (session) => current().subscribers.add(session),
          onClose: (session) => current().subscribers.delete(session),
          logger,
          ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
        })
      : undefined;

  const mcp = createMcpHandler(() => buildServer(() => ops, shape), {
    onerror: (error) => logger.log({ level: 'warn', event: 'mcp_error', error: error.message }),
  });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const serveMcp = toNodeHandler(mcp, { maxRequestBodySize: maxBodyBytes });
  const serve: McpServe = async (req, res, body, draining) => {
    const record = tracer.requests.getStore();
    if (store !== undefined && (await store.serve(req, res, body, record, draining))) return;
    if (draining) return rejectDraining(res, record);
    await serveMcp(req, res, body);
  };

  const health = (draining: boolean): HealthBody => ({
    status: draining ? 'draining' : 'ok',
    name: serverInfo.name,
    version: serverInfo.version,
    uptime_seconds: Math.round((Date.now() - started) / 1000),
    ...counts,
    ...(store === undefined ? {} : { sessions: store.size }),
  });
  const front = createHttpFront({
    allowedHosts: options.allowedHosts === false ? undefined : (options.allowedHosts ?? localhostAllowedHostnames()),
    allowedOrigins:
      options.allowedOrigins === false ? undefined : (options.allowedOrigins ?? originsFromEnv(options.env ?? {})),
    guard,
    maxBodyBytes,
    logger,
    tracer,
    health,
    serve,
  });

  const self: Runtime = {
    name: serverInfo.name,
    version: serverInfo.version,
    counts,
    sessions: store !== undefined,
    handler: front.handler,
    createServer(serverOptions = {}) {
      const connection: Connection = { subscriptions: new Set() };
      const follow = (): Operations => {
        const runtime = serverOptions.follow?.();
        return (runtime === undefined ? undefined : internalsOf.get(runtime)?.ops) ?? current();
      };
      const server = connect(connection, follow);
      current().subscribers.add(connection);
      server.onclose = () => current().subscribers.delete(connection);
      return server;
    },
    health: () => health(front.draining),
    get inFlight() {
      return front.inFlight;
    },
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const idle = await front.drain(timeoutMs);
      if (store === undefined) return idle;
      // sessions end by DELETE or when idle; until then (or the time-out) they are still served
      while (store.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      return store.size === 0 && front.inFlight === 0;
    },
    async close() {
      void front.drain(0);
      await store?.close();
      subscribers.close();
      await mcp.close();
      await egress.close();
    },
  };
  internalsOf.set(self, { ops, store, succeed: (next) => (successor = next) });
  if (options.adopt !== undefined) adopt(self, options.adopt);
  return self;
}

/** The runtime `next` replaces `previous`: open sessions and connections move over, and hear the lists changed. */
function adopt(next: Runtime, previous: Runtime): void {
  const from = internalsOf.get(previous);
  const to = internalsOf.get(next);
  if (from === undefined || to === undefined) return;
  if (from.store !== undefined && to.store !== undefined) to.store.adopt(from.store);
  to.ops.subscribers.adopt(from.ops.subscribers);
  // the servers of those connections were built by the old runtime: they now read from the new one
  from.succeed(next);
}
/** The caller's user id: `_meta["mcpctl/user_id"]` of the request, else the X-MCP-User-Id header. */
export function userIdOf(ctx: ServerContext): string | undefined {
  const fromMeta = ctx.mcpReq._meta?.[USER_ID_META_KEY];
  const fromHeader = ctx.http?.req?.headers.get(USER_ID_HEADER) ?? undefined;
  const id = typeof fromMeta === 'string' && fromMeta !== '' ? fromMeta : fromHeader === '' ? undefined : fromHeader;
  if (id === undefined) return undefined;
  if (id.length > MAX_USER_ID_LENGTH || /\p{Cc}/u.test(id)) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `The user id must be 1-${MAX_USER_ID_LENGTH} characters without control characters`,
    );
  }
  return id;
}
