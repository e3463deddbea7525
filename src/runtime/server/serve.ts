/**
 * The serve stage of a runtime: how requests reach the compiled definition. Stateless by
 * default, a fresh SDK server per request, so any instance can answer any request and nothing
 * leaks between clients; with `sessions: true` a session per client as well (`sessions.ts`);
 * and long-lived connections (stdio) built on demand. All behind the HTTP front.
 */
import { createMcpHandler, localhostAllowedHostnames, type Server } from '@modelcontextprotocol/server';
import { originsFromEnv } from '../../shared/origins.js';
import type { CompiledDefinition } from './compile.js';
import { bridgeToFetch } from './fetch-bridge.js';
import { createHttpFront, rejectDraining, type HealthBody, type HttpFront, type McpServe } from './http-front.js';
import { buildServer, type Operations } from './mcp-server.js';
import { createOperations } from './operations.js';
import { createListenBus } from './listen-streams.js';
import { rejectParamHeaderMismatch } from './param-headers.js';
import { createSuccession, operationsOf, type Succession } from './reload.js';
import { taskStoreFor } from './task-folder.js';
import { contextOf, createTaskListen } from './task-listen.js';
import { noticeChanges } from './task-notices.js';
import type { CreateServerOptions, RuntimeOptions } from './runtime-types.js';
import { SessionStore } from './sessions.js';
import type { Connection } from './subscriptions.js';
import { createTracer, type RequestRecord } from './tracing.js';
import { spansWanted } from './trace-spans.js';

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A compiled definition being served. */
export interface Serving {
  succession: Succession;
  store: SessionStore | undefined;
  front: HttpFront;
  health(draining: boolean): HealthBody;
  /** a long-lived connection (stdio): it may subscribe, and it hears about changes */
  connectServer(options: CreateServerOptions): Server;
  /** ends the stateless MCP handler */
  closeMcp(): Promise<void>;
}

export function createServing(compiled: CompiledDefinition, options: RuntimeOptions, started: number): Serving {
  const { logger, shape } = compiled;
  const tracer = createTracer(logger, compiled.secrets, spansWanted(options.env));
  const ops = createOperations(compiled, {
    tracer,
    defaultUserId: options.defaultUserId,
    current: () => succession.current(),
    requestStateKey: options.requestStateKey,
    taskStore: noticeChanges(taskStoreFor(options)),
  });
  const connect = (connection: Connection, follow: () => Operations): Server => {
    const server = buildServer(follow, shape, connection);
    connection.server = server;
    return server;
  };
  const store = createSessionStore(compiled, options, connect, () => succession.current());
  const succession = createSuccession(ops, store);
  const bus = createListenBus({
    subscribers: () => succession.current().subscribers,
    watchable: () => watchableResources(succession.current()),
  });
  ops.subscribers.listenStreams = (uri) => bus.publish({ kind: 'resource_updated', uri });
  const logMcpError = (error: Error): void => logger.log({ level: 'warn', event: 'mcp_error', error: error.message });
  const mcp = createMcpHandler((ctx) => buildServer(() => ops, shape, undefined, ctx.era), {
    bus,
    onerror: logMcpError,
  });
  // a listen stream may also follow the caller's tasks (task-listen.ts)
  const taskListen = createTaskListen({
    store: ops.tasks.store,
    userOf: (request, meta) => succession.current().callContext(contextOf(request, meta)).userId,
  });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // the front has read and parsed the body (within maxBodyBytes): the handler gets it as is
  const fetchMcp = taskListen.wrap((request, requestOptions) => mcp.fetch(request, requestOptions));
  const serveStateless = bridgeToFetch<RequestRecord>((request, requestOptions, record) => {
    // the SDK hands this Request to the server it builds for it (ctx.http.req): its handlers find the record by it
    tracer.noteRequest(request, record);
    return fetchMcp(request, requestOptions);
  }, logMcpError);
  const serve: McpServe = async (req, res, body, record, draining) => {
    if (rejectParamHeaderMismatch(req, res, body, succession.current().tools, record)) return;
    // one server serves all of a session's requests: they find their record through the tracer's storage
    if (store !== undefined && (await tracer.requests.run(record, () => store.serve(req, res, body, record, draining))))
      return;
    if (draining) return rejectDraining(res, record);
    await serveStateless(req, res, body, record);
  };
  const health = (draining: boolean): HealthBody => ({
    status: draining ? 'draining' : 'ok',
    name: compiled.serverInfo.name,
    version: compiled.serverInfo.version,
    uptime_seconds: Math.round((Date.now() - started) / 1000),
    ...compiled.counts,
    ...(store === undefined ? {} : { sessions: store.size }),
  });
  const front = createHttpFront({
    ...frontAccess(options),
    guard: compiled.guard,
    maxBodyBytes,
    logger,
    tracer,
    health,
    serve,
    observe: options.observeRequest,
  });
  const connectServer = (serverOptions: CreateServerOptions): Server => {
    const connection: Connection = { subscriptions: new Set() };
    const follow = (): Operations => {
      const runtime = serverOptions.follow?.();
      return (runtime === undefined ? undefined : operationsOf(runtime)) ?? succession.current();
    };
    const server = connect(connection, follow);
    succession.current().subscribers.add(connection);
    server.onclose = () => succession.current().subscribers.delete(connection);
    return server;
  };
  const closeMcp = (): Promise<void> => {
    taskListen.closeAll();
    return mcp.close();
  };
  return { succession, store, front, health, connectServer, closeMcp };
}

/** The sessions of a definition with `sessions: true`; each session's server follows the newest runtime. */
function createSessionStore(
  compiled: CompiledDefinition,
  options: RuntimeOptions,
  connect: (connection: Connection, follow: () => Operations) => Server,
  current: () => Operations,
): SessionStore | undefined {
  if (!compiled.sessions) return undefined;
  return new SessionStore({
    createServer: (connection) => connect(connection, current),
    onOpen: (session) => current().subscribers.add(session),
    onClose: (session) => current().subscribers.delete(session),
    logger: compiled.logger,
    ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
  });
}

/** The resources whose file can be watched (shown to anyone: the ones a client without an id lists). */
function watchableResources(ops: Operations): string[] {
  return ops.resources
    .list(undefined)
    .map((resource) => resource.uri)
    .filter((uri) => ops.resources.fileOf(uri) !== undefined);
}

/** Which hosts and page origins may call: localhost and MCPCTL_ALLOWED_ORIGINS unless told otherwise. */
function frontAccess(options: RuntimeOptions): {
  allowedHosts: string[] | undefined;
  allowedOrigins: string[] | undefined;
} {
  return {
    allowedHosts: options.allowedHosts === false ? undefined : (options.allowedHosts ?? localhostAllowedHostnames()),
    allowedOrigins:
      options.allowedOrigins === false ? undefined : (options.allowedOrigins ?? originsFromEnv(options.env ?? {})),
  };
}
