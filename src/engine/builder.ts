/**
 * Builds: validate a definition against the contract, write its content-addressed bundle, start
 * it once and talk MCP to it (initialize and the lists), stop it, and keep the server record.
 * A definition identical to an earlier one is the earlier server.
 */
import { BuildRequest } from '../api/contract.js';
import { isValidated, markValidated } from '../runtime/host/bundle.js';
import { requiredEnvVars } from '../definition/check.js';
import { createAdmission, type WorkQueue } from './admission.js';
import { parseEnvRefs } from '../definition/interpolate.js';
import { issuesToDetails } from './http/zod-details.js';
import { newId } from './ids.js';
import { checkBuildLimits } from './engine-limits.js';
import { createLocalCredentials, type LocalCredentials } from './local-credentials.js';
import { probeMcp, ProbeError } from './mcp-probe.js';
import type { Problem } from '../shared/errors.js';
import type { SpawnWarmRuntime } from './runners/process/warm-pool.js';
import { ServiceError } from './service-error.js';
import type { BuildService, StartRuntimeProcess } from './services.js';
import type { Logger } from './engine-log.js';
import type { ServerRecord } from './records.js';
import type { Store } from './store/store.js';

/** What a build needs from the runtime (src/runtime/host/bundle.ts and process.ts). */
export interface RuntimeModules {
  writeBundle(request: BuildRequest, bundlesRoot: string): Promise<{ dir: string; digest: string }>;
  startRuntimeProcess: StartRuntimeProcess;
  /** spawns a runtime process that loads and waits for a bundle (the engine's warm pool); absent: every start is cold */
  spawnWarmRuntimeProcess?: SpawnWarmRuntime;
}

export interface BuilderOptions {
  store: Store;
  /** `<MCPCTL_HOME>/bundles` */
  bundlesDir: string;
  /** the engine's address; a server's `url` is its record under /v1/servers */
  baseUrl: string;
  /** the engine's version, sent as the client version of the smoke check */
  version: string;
  logger: Logger;
  /** the runtime; default: loaded from src/runtime when it is there */
  runtime?: () => Promise<RuntimeModules | undefined>;
  clock?: () => number;
  /** how long the started server has to answer the smoke check */
  smokeTimeoutMs?: number;
  /** the engine's build queue: checks run at most so many at once, the others wait their turn */
  queue?: WorkQueue;
  /** how the check calls a server with `auth` (the engine's own key); default: a key of the builder's own */
  localCredentials?: LocalCredentials;
}

/** Placeholder for `${VAR}` references during the smoke start: the real values come with a deployment's env_vars. */
export const PLACEHOLDER_VALUE = 'mcpctl-build-check';
const DEFAULT_VERSION = '0.1.0';

export function createBuilder(options: BuilderOptions): BuildService & { close(): Promise<void> } {
  const clock = options.clock ?? Date.now;
  const loadRuntime = options.runtime ?? loadRuntimeModules;
  const smokeTimeoutMs = options.smokeTimeoutMs ?? 30_000;
  const queue = options.queue ?? createAdmission(undefined, clock).builds;
  const inFlight = new Map<string, Promise<ServerRecord>>();
  /** checks under way, their process's stop included */
  const checks = new Set<Promise<void>>();
  const log = options.logger;
  const localCredentials = options.localCredentials ?? createLocalCredentials(clock);

  const build = async (input: BuildRequest): Promise<ServerRecord> => {
    const request = validateBuildRequest(input);
    queue.admit('builds');
    const runtime = await loadRuntime();
    if (runtime === undefined) {
      throw new ServiceError(
        'not_implemented',
        'building needs the server runtime, which this engine does not include yet',
      );
    }
    const started = clock();
    let bundle: { dir: string; digest: string };
    try {
      bundle = await runtime.writeBundle(request, options.bundlesDir);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      log.warn('bundle failed', { name: request.name, error });
      throw new ServiceError('build_failed', `the bundle could not be written: ${messageOf(error)}`, problemsOf(error));
    }
    // An identical definition built before is that server; the answer reports this request's time.
    const reused = (record: ServerRecord): ServerRecord => ({
      ...record,
      server: { ...record.server, build_time: Math.round(clock() - started) / 1000, reused: true },
    });
    const [existing] = await options.store.listServers({ digest: bundle.digest });
    if (existing !== undefined) return reused(existing);
    // Two identical builds at once become one server.
    const running = inFlight.get(bundle.digest);
    if (running !== undefined) return reused(await running);
    const work = (async () => {
      // The check's own time-out starts when it has a slot, not while it waits. The build goes on
      // once the check passed; the slot is the check process's until it is gone (tracked: close waits).
      let told = false;
      await new Promise<void>((passed, failed) => {
        const slot = queue.run(() => smokeCheck(runtime, request, bundle.dir, passed), {
          onWait: (ahead) => {
            // said once, not at every step of a long queue
            if (told) return;
            told = true;
            log.info('build waiting for a slot', { name: request.name, ahead, slots: queue.concurrency });
          },
        });
        const tracked = slot.then(passed, failed).finally(() => checks.delete(tracked));
        checks.add(tracked);
      });
      const mcpId = newId('mcp');
      const { files: _files, ...definition } = request;
      const requiredEnv = requiredEnvVars(definition).map((v) => v.name);
      const record: ServerRecord = {
        server: {
          mcp_id: mcpId,
          name: request.name,
          status: 'ready',
          url: `${options.baseUrl}/v1/servers/${mcpId}`,
          build_time: Math.round(clock() - started) / 1000,
          template: request.template,
          version: request.version ?? DEFAULT_VERSION,
          created_at: new Date(clock()).toISOString(),
          tools: request.tools?.length ?? 0,
          resources: request.resources?.length ?? 0,
          prompts: request.prompts?.length ?? 0,
          ...(requiredEnv.length === 0 ? {} : { required_env: requiredEnv }),
        },
        bundleDir: bundle.dir,
        digest: bundle.digest,
        definition,
      };
      await options.store.putServer(record);
      log.info('built', {
        mcp_id: mcpId,
        name: request.name,
        digest: bundle.digest,
        build_time: record.server.build_time,
      });
      return record;
    })();
    inFlight.set(bundle.digest, work);
    try {
      return await work;
    } finally {
      inFlight.delete(bundle.digest);
    }
  };

  /**
   * Starts the bundle, checks that it answers MCP and offers what the definition declares, stops it.
   * `passed` is called as soon as the check passed, before the process is stopped.
   */
  const smokeCheck = async (
    runtime: RuntimeModules,
    request: BuildRequest,
    bundleDir: string,
    passed: () => void,
  ): Promise<void> => {
    const access = await localCredentials.prepare(request, placeholderEnv(request));
    const env = access.env;
    const recent: string[] = [];
    const onLog = (line: string) => {
      recent.push(line.slice(0, 300));
      if (recent.length > 20) recent.shift();
    };
    let child;
    try {
      child = await runtime.startRuntimeProcess({
        bundleDir,
        port: 0,
        host: '127.0.0.1',
        env,
        logLevel: 'info',
        onLog,
      });
    } catch (error) {
      const problems = problemsOf(error);
      // the details say why, each at its field; the message need not say it again
      throw new ServiceError(
        'build_failed',
        problems === undefined ? `the server did not start: ${messageOf(error)}` : 'the server did not start',
        problems,
      );
    }
    try {
      const token = await access.token(child.mcpUrl);
      const found = await probeMcp({
        mcpUrl: child.mcpUrl,
        ...(token === undefined ? {} : { token }),
        lists: {
          tools: (request.tools?.length ?? 0) > 0,
          resources: (request.resources?.length ?? 0) > 0,
          prompts: (request.prompts?.length ?? 0) > 0,
        },
        timeoutMs: smokeTimeoutMs,
        clientVersion: options.version,
      });
      const missing = [
        ...missingItems(request.tools ?? [], (t) => t.name, found.tools, 'tools', 'name', 'tool'),
        // URI templates are listed apart, and a resource limited to `users` is listed only to them.
        ...missingItems(
          request.resources ?? [],
          (r) => r.uri,
          found.resources,
          'resources',
          'uri',
          'resource',
          (r) => !r.uri.includes('{') && r.users === undefined,
        ),
        ...missingItems(request.prompts ?? [], (p) => p.name, found.prompts, 'prompts', 'name', 'prompt'),
      ];
      if (missing.length > 0)
        throw new ServiceError(
          'build_failed',
          'the server started but does not offer everything the definition declares',
          missing,
        );
      passed();
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (error instanceof ProbeError) {
        const logs = recent.length === 0 ? [] : [{ path: '', message: `server log: ${recent.slice(-5).join(' | ')}` }];
        throw new ServiceError('build_failed', `the server started but did not answer MCP: ${error.message}`, logs);
      }
      throw error;
    } finally {
      await child
        .stop(2000)
        .catch((error: unknown) => log.warn('could not stop a build check server', { pid: child.pid, error }));
    }
  };

  /** Waits for the checks under way, and for their processes to be gone. */
  const close = async (): Promise<void> => {
    while (checks.size > 0) await Promise.allSettled([...checks]);
  };

  return { build, close };
}

/**
 * A build request as the builder trusts it: one validated at the HTTP edge (the contract and this
 * service's limits) is taken as it is; any other (a direct caller) is validated here, once.
 */
export function validateBuildRequest(input: BuildRequest): BuildRequest {
  if (isValidated(input)) return input;
  const parsed = BuildRequest.safeParse(input);
  if (!parsed.success) {
    throw new ServiceError(
      'validation_failed',
      'the definition does not match the contract',
      issuesToDetails(parsed.error.issues),
    );
  }
  const overLimit = checkBuildLimits(parsed.data);
  if (overLimit.length > 0)
    throw new ServiceError('validation_failed', 'the definition is over a limit of this service', overLimit);
  return markValidated(parsed.data);
}

/** Loads the runtime modules when the first build needs them. */
export async function loadRuntimeModules(): Promise<RuntimeModules> {
  const [bundle, proc] = await Promise.all([import('../runtime/host/bundle.js'), import('../runtime/host/process.js')]);
  return {
    writeBundle: bundle.writeBundle,
    startRuntimeProcess: proc.startRuntimeProcess,
    spawnWarmRuntimeProcess: proc.spawnWarmRuntimeProcess,
  };
}

/**
 * A value for every variable the definition references without a default, so the server can
 * start for the check. A bearer token's variables are left to local-credentials.ts, which gives
 * them a random value it then sends.
 */
export function placeholderEnv(request: BuildRequest): Record<string, string> {
  const env: Record<string, string> = {};
  const { files: _files, auth, ...rest } = request;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 80) return;
    if (typeof value === 'string') {
      if (!value.includes('${')) return;
      try {
        for (const part of parseEnvRefs(value))
          if (part.kind === 'ref' && part.fallback === undefined) env[part.name] = PLACEHOLDER_VALUE;
      } catch {
        // a malformed reference fails the start with its own message
      }
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, depth + 1));
    else if (value !== null && typeof value === 'object')
      Object.values(value).forEach((item) => visit(item, depth + 1));
  };
  visit(rest, 0);
  if (auth?.type === 'oauth') visit(auth, 0);
  return env;
}

function missingItems<T>(
  declared: T[],
  keyOf: (item: T) => string,
  offered: string[],
  field: string,
  keyField: string,
  what: string,
  listed: (item: T) => boolean = () => true,
): Array<{ path: string; message: string }> {
  const have = new Set(offered);
  const missing: Array<{ path: string; message: string }> = [];
  declared.forEach((item, index) => {
    if (listed(item) && !have.has(keyOf(item)))
      missing.push({
        path: `${field}[${index}].${keyField}`,
        message: `the started server does not list this ${what}`,
      });
  });
  return missing;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The problems of the runtime's errors become details: a RuntimeProcessError's `{ path, message }`
 * as they are, a BundleError's lines (each names its own source file) as messages.
 */
function problemsOf(error: unknown): Array<{ path: string; message: string }> | undefined {
  const { details, problems } = (error ?? {}) as { details?: Problem[]; problems?: unknown };
  const found: Problem[] = Array.isArray(details)
    ? details
    : Array.isArray(problems)
      ? problems.filter((p): p is string => typeof p === 'string').map((message) => ({ message }))
      : [];
  return found.length === 0 ? undefined : found.map((p) => ({ path: p.path ?? '', message: p.message }));
}
