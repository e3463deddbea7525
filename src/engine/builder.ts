/**
 * Builds: validate a definition against the contract, write its content-addressed bundle, start
 * it once and talk MCP to it (initialize and the lists), stop it, and keep the server record.
 * A definition identical to an earlier one is the earlier server.
 */
import { BuildRequest, type BuildSource } from '../api/contract.js';
import { isValidated, markValidated } from '../runtime/host/bundle.js';
import { requiredEnvVars } from '../definition/check.js';
import { createAdmission, type WorkQueue } from './admission.js';
import { issuesToDetails } from './http/zod-details.js';
import { newId } from './ids.js';
import { checkBuildLimits } from './engine-limits.js';
import { createLocalCredentials, type LocalCredentials } from './local-credentials.js';
import { messageOf, problemsOf, smokeCheck, type SmokeCheckDeps } from './smoke-check.js';
import type { SpawnWarmRuntime } from './runners/process/warm-pool.js';
import { ServiceError, storageServiceError } from './service-error.js';
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

export { PLACEHOLDER_VALUE, placeholderEnv } from './smoke-check.js';

const DEFAULT_VERSION = '0.1.0';

export function createBuilder(options: BuilderOptions): BuildService & { close(): Promise<void> } {
  const clock = options.clock ?? Date.now;
  const loadRuntime = options.runtime ?? loadRuntimeModules;
  const queue = options.queue ?? createAdmission(undefined, clock).builds;
  const inFlight = new Map<string, Promise<ServerRecord>>();
  /** checks under way, their process's stop included */
  const checks = new Set<Promise<void>>();
  const log = options.logger;
  const check: SmokeCheckDeps = {
    localCredentials: options.localCredentials ?? createLocalCredentials(clock),
    timeoutMs: options.smokeTimeoutMs ?? 30_000,
    clientVersion: options.version,
    logger: log,
  };

  const build = async (input: BuildRequest): Promise<ServerRecord> => {
    // Where the definition was written is no part of the server: the bundle and its digest leave it out.
    const { source, ...definition } = validateBuildRequest(input);
    const request = markValidated(definition);
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
      // a full or read-only disk is the engine's problem, not the definition's
      const storage = storageServiceError(error);
      if (storage !== undefined) throw storage;
      throw new ServiceError('build_failed', `the bundle could not be written: ${messageOf(error)}`, problemsOf(error));
    }
    // An identical definition built before is that server; the answer reports this request's time.
    const reused = (record: ServerRecord): ServerRecord => ({
      ...record,
      server: { ...record.server, build_time: Math.round(clock() - started) / 1000, reused: true },
    });
    const [existing] = await options.store.listServers({ digest: bundle.digest });
    if (existing !== undefined) return reused(await withSource(options.store, existing, source));
    // Two identical builds at once become one server.
    const running = inFlight.get(bundle.digest);
    if (running !== undefined) return reused(await running);
    const work = (async () => {
      // The check's own time-out starts when it has a slot, not while it waits. The build goes on
      // once the check passed; the slot is the check process's until it is gone (tracked: close waits).
      let told = false;
      await new Promise<void>((passed, failed) => {
        const slot = queue.run(() => smokeCheck(check, runtime, request, bundle.dir, passed), {
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
      const record = serverRecordOf(request, bundle, options.baseUrl, clock() - started, clock);
      if (source !== undefined) record.source = source;
      const mcpId = record.server.mcp_id;
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

  /** Waits for the checks under way, and for their processes to be gone. */
  const close = async (): Promise<void> => {
    while (checks.size > 0) await Promise.allSettled([...checks]);
  };

  return { build, close };
}

/**
 * The record of a server built before, with where the definition is written now: the same definition
 * from another file, or moved within its file, is the same server, and its page shows the newest place.
 */
async function withSource(store: Store, record: ServerRecord, source: BuildSource | undefined): Promise<ServerRecord> {
  if (source === undefined || JSON.stringify(source) === JSON.stringify(record.source)) return record;
  const updated = { ...record, source };
  await store.putServer(updated);
  return updated;
}

/**
 * A build request as the builder trusts it: one validated at the HTTP edge (the contract and this
 * service's limits) is taken as it is; any other (a direct caller) is validated here, once.
 */
/** The record of a server just built and checked. */
function serverRecordOf(
  request: BuildRequest,
  bundle: { dir: string; digest: string },
  baseUrl: string,
  elapsedMs: number,
  clock: () => number,
): ServerRecord {
  const mcpId = newId('mcp');
  const { files: _files, ...definition } = request;
  const requiredEnv = requiredEnvVars(definition).map((v) => v.name);
  return {
    server: {
      mcp_id: mcpId,
      name: request.name,
      status: 'ready',
      url: `${baseUrl}/v1/servers/${mcpId}`,
      build_time: Math.round(elapsedMs) / 1000,
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
}

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
