/**
 * One start of an instance's process through its runner (instance.ts calls it for a first start
 * and for every restart): the runner's once-per-build step, the start, then health checks until
 * the process answers, exits, or the start time-out passes. A start that did not come up is a
 * StartFailure that says whether trying again may work.
 */
import { RunnerStartError, type ExitInfo, type Runner, type RunnerInstance } from '../runners/runner.js';
import type { DeploymentLimits } from './limits.js';
import { describeExit, parseLogLine } from './log-lines.js';
import type { InstanceSpec } from './instance-deps.js';

const OUTPUT_TAIL = 5;

/** Waits `ms` without keeping the engine's process alive. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** A start that did not come up. `transient` when trying again may work (a time-out, a kill). */
export class StartFailure extends Error {
  override readonly name = 'StartFailure';
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** The runner's spec of instance `id`, without its log hook. */
export function runnerSpec(
  id: string,
  spec: InstanceSpec,
  limits: Pick<DeploymentLimits, 'startTimeoutMs'>,
): StartContext['spec'] {
  const { owner, bundleDir, env, logLevel, resources, tasksDir } = spec;
  return {
    labels: { engine: owner?.engine ?? '', deployment: owner?.deployment ?? '', instance: id },
    bundleDir,
    env,
    logLevel,
    limits: { startTimeoutMs: limits.startTimeoutMs },
    ...(resources === undefined ? {} : { resources }),
    ...(tasksDir === undefined ? {} : { tasksDir }),
  };
}

/** The last lines a process wrote, each cut at 300 characters: what a failure's reason quotes. */
export class OutputTail {
  private readonly lines: string[] = [];

  /** Keeps `raw` (its message, when it is a JSON log line) and returns it parsed. */
  add(raw: string): Record<string, unknown> {
    const line = parseLogLine(raw);
    const text = typeof line.msg === 'string' ? line.msg : raw;
    this.lines.push(text.length > 300 ? `${text.slice(0, 300)}…` : text);
    if (this.lines.length > OUTPUT_TAIL) this.lines.shift();
    return line;
  }

  clear(): void {
    this.lines.length = 0;
  }

  /** `reason`, with the last output lines when there are any. */
  describe(reason: string): string {
    return this.lines.length === 0 ? reason : `${reason}; last output: ${this.lines.join(' | ')}`;
  }
}

/** What the start needs of its instance. */
export interface StartContext {
  runner: Runner;
  /** the runner's spec of this instance, without its log hook */
  spec: Omit<Parameters<Runner['start']>[0], 'onLog'>;
  limits: Pick<DeploymentLimits, 'startTimeoutMs' | 'healthTimeoutMs' | 'healthIntervalMs'>;
  clock: () => number;
  onLog: (raw: string) => void;
  /** the reason with the process's last output lines */
  describe: (reason: string) => string;
  /** the instance was stopped or given up meanwhile */
  ended: () => boolean;
}

/** The runner's failure as a StartFailure, transient when the runner says so. */
function asStartFailure(error: unknown, describe: (reason: string) => string): StartFailure {
  const transient = error instanceof RunnerStartError && error.transient;
  return new StartFailure(
    describe(`could not start: ${error instanceof Error ? error.message : String(error)}`),
    transient,
  );
}

/**
 * Prepares and starts the process; resolves with its handle (once it listens) and the deadline of
 * its first answer. The documented start time-out covers the whole start from the moment the
 * start has its slot (not from the request, which may have waited in the queue).
 */
export async function startProcess(ctx: StartContext): Promise<{ handle: RunnerInstance; deadline: number }> {
  if (ctx.ended()) throw new Error('stopped while starting');
  // What a runner does once per build (the Docker runner builds its image) is not part of the start time-out.
  await ctx.runner.prepare?.(ctx.spec.bundleDir).catch((error: unknown) => {
    throw asStartFailure(error, ctx.describe);
  });
  const deadline = ctx.clock() + ctx.limits.startTimeoutMs;
  const handle = await ctx.runner.start({ ...ctx.spec, onLog: ctx.onLog }).catch((error: unknown) => {
    throw asStartFailure(error, ctx.describe);
  });
  if (ctx.ended()) {
    await handle.stop(0).catch(() => undefined);
    throw new Error('stopped while starting');
  }
  return { handle, deadline };
}

/**
 * Checks a new process until it answers its first health check. Throws a StartFailure when it
 * exits first (transient when it was killed) or does not answer by `deadline` (then it is killed).
 */
export async function awaitFirstAnswer(
  ctx: StartContext,
  handle: RunnerInstance,
  deadline: number,
  exitOf: () => ExitInfo | undefined,
): Promise<void> {
  const { limits, clock } = ctx;
  while (!ctx.ended()) {
    const exit = exitOf();
    if (exit !== undefined)
      throw new StartFailure(
        ctx.describe(`${describeExit(exit)} before answering its health check`),
        exit.signal !== null,
      );
    if (await handle.health(Math.min(limits.healthTimeoutMs, Math.max(1, deadline - clock())))) break;
    if (clock() >= deadline) {
      await handle.stop(0).catch(() => undefined);
      throw new StartFailure(
        ctx.describe(`not healthy ${Math.round(limits.startTimeoutMs / 1000)} s after start`),
        true,
      );
    }
    await pause(Math.min(100, limits.healthIntervalMs));
  }
  if (ctx.ended()) throw new Error('stopped while starting');
  const exit = exitOf();
  if (exit !== undefined) throw new StartFailure(ctx.describe(describeExit(exit)), exit.signal !== null);
}
