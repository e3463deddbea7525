/**
 * The life of one supervised instance (instance.ts), written down in one table: its states, the
 * events that move it, and where each event leads from each state. Every state change of an
 * instance goes through `nextState`; an event the table does not list for a state is refused and
 * leaves the state as it is. Pure.
 *
 *   starting ─ready─▶ healthy ─failedCheck─▶ unhealthy ─passed─▶ healthy
 *   starting, healthy, unhealthy, draining ─crashed─▶ restarting ─ready─▶ healthy
 *   any running state ─drain─▶ draining, ─gaveUp─▶ failed (for good), ─stop─▶ stopped
 */

export type InstanceState = 'starting' | 'healthy' | 'unhealthy' | 'restarting' | 'draining' | 'stopped' | 'failed';

export type InstanceEvent =
  /** its process answered its first health check (a start or a restart) */
  | 'ready'
  /** it failed a health check, or the gateway could not reach it */
  | 'failedCheck'
  /** it passed a check (or answered a request) after failing one */
  | 'passed'
  /** its process ended, did not start, or was replaced: a restart waits for its back-off */
  | 'crashed'
  /** restarts are exhausted, or the server refused to start */
  | 'gaveUp'
  /** taken out of balancing to let its requests finish */
  | 'drain'
  /** stopped on purpose (or its first start failed without retry) */
  | 'stop';

const RUNNING: readonly InstanceState[] = ['starting', 'healthy', 'unhealthy', 'restarting', 'draining'];

/** From each state, where each event it allows leads. */
const TABLE: Record<InstanceState, Partial<Record<InstanceEvent, InstanceState>>> = {
  starting: { ready: 'healthy', crashed: 'restarting', gaveUp: 'failed', drain: 'draining', stop: 'stopped' },
  healthy: { failedCheck: 'unhealthy', crashed: 'restarting', gaveUp: 'failed', drain: 'draining', stop: 'stopped' },
  unhealthy: { passed: 'healthy', crashed: 'restarting', gaveUp: 'failed', drain: 'draining', stop: 'stopped' },
  restarting: {
    ready: 'healthy',
    crashed: 'restarting',
    gaveUp: 'failed',
    drain: 'draining',
    stop: 'stopped',
  },
  // A draining instance whose process ends is restarted like any other until its drain stops it.
  draining: { crashed: 'restarting', gaveUp: 'failed', stop: 'stopped' },
  stopped: {},
  // Stopping a failed instance keeps it `failed`: the API still says why it was given up. One that
  // is drained (its deployment stopped) ends `stopped` like its siblings.
  failed: { drain: 'draining', stop: 'failed' },
};

/** Where `event` leads from `from`, or undefined when the table does not allow it. */
export function nextState(from: InstanceState, event: InstanceEvent): InstanceState | undefined {
  return TABLE[from][event];
}

/** The states an instance can still leave: it runs, starts, or waits to restart. */
export function isRunning(state: InstanceState): boolean {
  return RUNNING.includes(state);
}

/** The states in which a process may hold sessions: serving, failing checks, or draining. */
export function mayHoldSessions(state: InstanceState): boolean {
  return state === 'healthy' || state === 'unhealthy' || state === 'draining';
}

/** The states in which a start (a first start or a restart) is under way. */
export function isLaunching(state: InstanceState): boolean {
  return state === 'starting' || state === 'restarting';
}
