/**
 * A Runner that runs nothing: each start gives an instance whose health answer, exit and stop the
 * test controls. It lets supervision (instances, deployments, the service) be tested in-process
 * with fake timers, each case in milliseconds.
 */
import type { ExitInfo, Runner, RunnerInstance, StartInstanceSpec } from '../../../src/engine/runners/runner.js';
import { RunnerStartError } from '../../../src/engine/runners/runner.js';

export class FakeInstance implements RunnerInstance {
  readonly pid: number;
  readonly host = '127.0.0.1';
  readonly port: number;
  readonly exited: Promise<ExitInfo>;
  /** what its health check answers */
  healthy = true;
  /** health checks it was asked */
  checks = 0;
  stopped = false;
  private end!: (exit: ExitInfo) => void;

  constructor(
    readonly spec: StartInstanceSpec,
    serial: number,
  ) {
    this.pid = 1000 + serial;
    this.port = 40_000 + serial;
    this.exited = new Promise((resolve) => (this.end = resolve));
  }

  get labels(): StartInstanceSpec['labels'] {
    return this.spec.labels;
  }

  health(): Promise<boolean> {
    this.checks += 1;
    return Promise.resolve(this.healthy && !this.stopped);
  }

  /** its process ends by itself */
  crash(exit: ExitInfo = { code: 1, signal: null }): void {
    this.stopped = true;
    this.end(exit);
  }

  stop(): Promise<void> {
    if (!this.stopped) this.crash({ code: 0, signal: 'SIGTERM' });
    return Promise.resolve();
  }
}

export interface FakeRunner extends Runner {
  /** every instance started so far, in order */
  readonly started: FakeInstance[];
  /** instances still running */
  running(): FakeInstance[];
  /** the next starts fail with this error (one per entry), then starts succeed again */
  failNext: RunnerStartError[];
  /** new instances answer their health check as this says */
  healthyOnStart: boolean;
  /** the deployments the runner was told to forget (removed), as `engine deployment` */
  readonly forgotten: string[];
}

export function createFakeRunner(): FakeRunner {
  const started: FakeInstance[] = [];
  const runner: FakeRunner = {
    kind: 'process',
    started,
    failNext: [],
    healthyOnStart: true,
    running: () => started.filter((instance) => !instance.stopped),
    start(spec) {
      const failure = runner.failNext.shift();
      if (failure !== undefined) return Promise.reject(failure);
      const instance = new FakeInstance(spec, started.length + 1);
      instance.healthy = runner.healthyOnStart;
      started.push(instance);
      return Promise.resolve(instance);
    },
    find: () => Promise.resolve([]),
    forgotten: [],
    forget(engine, deployment) {
      runner.forgotten.push(`${engine} ${deployment}`);
      return Promise.resolve();
    },
  };
  return runner;
}

/** A start refused for good (the server cannot be served), or one that may pass. */
export function startError(transient: boolean): RunnerStartError {
  return new RunnerStartError(transient ? 'timed out' : 'the server refused to start', transient);
}
