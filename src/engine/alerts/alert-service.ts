/**
 * The engine's alerting: every interval it takes the deployments' snapshot, evaluates each
 * deployment's rules (from its deploy request, production's defaults when it gave none) over the
 * windows the request observer keeps, moves each alert between pending, firing and resolved, and
 * sends what changed, grouped per deployment, to every channel; a still-firing alert is sent again
 * after the repeat interval. `list()` answers GET /v1/alerts. With a folder, the alerts are kept
 * there (alert-file.ts) and read back by `restore()`: an engine restarted during an incident goes on
 * from where it was.
 */
import { effectiveAlertRules, describeRule, type AlertRule } from '../../definition/alerts-schema.js';
import type { Alert, AlertList } from '../../api/alerts.js';
import type { Logger } from '../engine-log.js';
import type { DeploymentSnapshot, RequestObserver } from '../observability/events.js';
import type { DeploymentService } from '../services.js';
import type { Store } from '../store/store.js';
import { loadAlerts, saveAlerts, type StoredAlert } from './alert-file.js';
import type { Channel } from './channels.js';
import { deliver, DEFAULT_RETRY, type RetryPolicy } from './deliver.js';
import {
  evaluateCondition,
  repeatDue,
  stepAlert,
  type AlertState,
  type Condition,
  type Transition,
} from './evaluate.js';
import { messagesFor, type AlertGroup } from './messages.js';
import { RequestWindows, RestartWindows } from './windows.js';

export interface AlertServiceDeps {
  store: Store;
  deployments: Pick<DeploymentService, 'snapshot'>;
  channels: Channel[];
  logger: Logger;
  clock: () => number;
  /** the engine's address, in messages */
  engineUrl: string;
  intervalMs: number;
  repeatMs: number;
  retry?: RetryPolicy;
  /** sends one message (default: deliver.ts, over HTTP) */
  deliver?: typeof deliver;
  /** where the alerts are kept across restarts (none: in memory only) */
  dir?: string;
}

/** Resolved alerts kept for the listing, at most, and for how long. */
const RECENT_MAX = 200;
const RECENT_MS = 24 * 3600_000;
/** Failed deploys looked at, newest first, per evaluation. */
const FAILED_LOOKED_AT = 20;

export class AlertService {
  /** feeds the windows: register with the engine's observers */
  readonly observer: RequestObserver;
  private readonly windows = new RequestWindows();
  private readonly restarts = new RestartWindows();
  private readonly active = new Map<string, AlertState>();
  private readonly recent: AlertState[] = [];
  private readonly rules = new Map<string, AlertRule[]>();
  private readonly seenFailed = new Set<string>();
  /** failed_rollout: the deployments running when it fired (a deployed one not among them replaced it) */
  private readonly runningAtFailure = new Map<string, Set<string>>();
  private readonly startedAt: number;
  private readonly aborts = new AbortController();
  private readonly sending = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private detach: () => void = () => {};
  /** what was last written to the folder, to write only what changed */
  private written = '';

  constructor(private readonly deps: AlertServiceDeps) {
    this.observer = this.windows;
    this.startedAt = deps.clock();
  }

  /** Evaluates every interval until close(), which calls `detach` (what stops feeding the windows). */
  start(detach: () => void = () => {}): void {
    this.detach = detach;
    this.timer = setInterval(() => {
      this.running ??= this.evaluate()
        .catch((error: unknown) => this.deps.logger.warn('evaluating alerts failed', { error: String(error) }))
        .finally(() => (this.running = undefined));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  /** Reads back the alerts kept in the folder (before start()). */
  async restore(): Promise<void> {
    if (this.deps.dir === undefined) return;
    const stored = await loadAlerts(this.deps.dir, this.deps.logger);
    for (const alert of stored.active) {
      const { runningAtFailure, ...state } = alert;
      const key = `${state.deploymentId}/${state.rule.name}`;
      this.active.set(key, state);
      if (runningAtFailure !== undefined) this.runningAtFailure.set(key, new Set(runningAtFailure));
    }
    this.recent.push(...stored.recent);
    this.written = this.fingerprint();
  }

  /** Stops evaluating, abandons deliveries still retrying, and keeps the alerts as they are. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.detach();
    await this.running;
    this.aborts.abort();
    await Promise.allSettled([...this.sending]);
    await this.persist().catch((error: unknown) =>
      this.deps.logger.warn('the alerts could not be kept', { error: String(error) }),
    );
  }

  /** One evaluation of every rule of every deployment; what changed is sent. */
  async evaluate(): Promise<void> {
    const now = this.deps.clock();
    const snapshots = this.deps.deployments.snapshot?.() ?? [];
    const changed = new Map<string, AlertState[]>();
    const note = (alert: AlertState) => {
      const list = changed.get(alert.deploymentId) ?? [];
      changed.set(alert.deploymentId, [...list, alert]);
    };
    const live = new Set(snapshots.map((s) => s.deploymentId));
    for (const snapshot of snapshots) {
      this.restarts.observe(snapshot, now);
      const rules = await this.rulesOf(snapshot.deploymentId, snapshot.environment);
      if (!rules.some((rule) => rule.type === 'error_rate' || rule.type === 'latency'))
        this.windows.forget(snapshot.deploymentId);
      for (const rule of rules) {
        if (rule.type === 'failed_rollout') continue;
        this.apply(snapshot, rule, now, note);
      }
    }
    this.resolveGone(live, now, note);
    await this.checkRollouts(snapshots, now, note);
    for (const alert of this.active.values()) if (repeatDue(alert, now, this.deps.repeatMs)) note(alert);
    this.prune(live, now);
    for (const alerts of changed.values()) this.send(alerts, now);
    await this.persist().catch((error: unknown) =>
      this.deps.logger.warn('the alerts could not be kept', { error: String(error) }),
    );
  }

  /** Writes the alerts to the folder when they changed since the last write. */
  private async persist(): Promise<void> {
    if (this.deps.dir === undefined) return;
    const fingerprint = this.fingerprint();
    if (fingerprint === this.written) return;
    const active: StoredAlert[] = [...this.active].map(([key, alert]) => {
      const running = this.runningAtFailure.get(key);
      return running === undefined ? alert : { ...alert, runningAtFailure: [...running] };
    });
    await saveAlerts(this.deps.dir, { active, recent: this.recent }, this.deps.clock());
    this.written = fingerprint;
  }

  /** What a restart must not lose: each alert's state, since and last message, and the resolved ones. */
  private fingerprint(): string {
    const active = [...this.active].map(([key, a]) => `${key}:${a.state}:${a.since}:${a.sentAt ?? ''}`);
    return `${active.join(',')}|${this.recent.length}:${this.recent[0]?.resolvedAt ?? ''}`;
  }

  /** Firing, pending and recently resolved alerts, of one deployment when given. */
  list(deploymentId?: string): AlertList {
    const of = (alert: AlertState) => deploymentId === undefined || alert.deploymentId === deploymentId;
    return {
      firing: [...this.active.values()].filter((a) => a.state === 'firing' && of(a)).map(viewOf),
      pending: [...this.active.values()].filter((a) => a.state === 'pending' && of(a)).map(viewOf),
      recent: this.recent.filter(of).map(viewOf),
      channels: this.deps.channels.length,
    };
  }

  private apply(snapshot: DeploymentSnapshot, rule: AlertRule, now: number, note: (a: AlertState) => void): void {
    const key = `${snapshot.deploymentId}/${rule.name}`;
    const condition = evaluateCondition(rule, {
      snapshot,
      now,
      requests: (seconds) => this.windows.stats(snapshot.deploymentId, now - seconds * 1000),
      restarts: this.restarts,
    });
    const previous = this.active.get(key);
    if (previous !== undefined && this.unjudgedSinceStart(previous, rule, condition, now)) return;
    const base = {
      deploymentId: snapshot.deploymentId,
      server: snapshot.server,
      environment: snapshot.environment,
      rule,
    };
    const { alert, transition } = stepAlert(previous, condition, now, base);
    this.record(key, alert, transition, note);
  }

  /**
   * A firing alert from before the engine started whose window the engine has not yet watched
   * whole: the windows emptied with the restart, so too few requests (or the restarts counted
   * since) are no reason to resolve it. Requests enough to judge by do decide.
   */
  private unjudgedSinceStart(alert: AlertState, rule: AlertRule, condition: Condition, now: number): boolean {
    if (alert.state !== 'firing' || (alert.firedAt ?? now) >= this.startedAt) return false;
    if (now - this.startedAt >= rule.windowSeconds * 1000) return false;
    return rule.type === 'restarts' ? !condition.holds : condition.value === null;
  }

  private record(
    key: string,
    alert: AlertState | undefined,
    transition: Transition,
    note: (a: AlertState) => void,
  ): void {
    if (alert === undefined || alert.state === 'resolved') {
      this.active.delete(key);
      this.runningAtFailure.delete(key);
    } else this.active.set(key, alert);
    if (alert?.state === 'resolved') this.recent.unshift(alert);
    if (alert !== undefined && transition !== undefined) note(alert);
  }

  /** Alerts of deployments that no longer run resolve: what they watched is gone. */
  private resolveGone(live: ReadonlySet<string>, now: number, note: (a: AlertState) => void): void {
    for (const [key, alert] of this.active) {
      if (live.has(alert.deploymentId) || alert.rule.type === 'failed_rollout') continue;
      if (alert.state === 'pending') {
        this.active.delete(key);
        continue;
      }
      const summary = `${alert.server} (${alert.deploymentId}) no longer runs here`;
      this.record(key, { ...alert, state: 'resolved', resolvedAt: now, summary }, 'resolved', note);
    }
  }

  /**
   * A deploy that ended failed since the engine started fires its failed_rollout rule; it resolves
   * when a later deployment of the same server and environment is deployed, or after its window.
   */
  private async checkRollouts(
    snapshots: DeploymentSnapshot[],
    now: number,
    note: (a: AlertState) => void,
  ): Promise<void> {
    for (const [key, alert] of this.active) {
      if (alert.rule.type !== 'failed_rollout') continue;
      const before = this.runningAtFailure.get(key);
      const replaced = snapshots.some(
        (s) =>
          s.server === alert.server &&
          s.environment === alert.environment &&
          s.status === 'deployed' &&
          before?.has(s.deploymentId) === false,
      );
      const expired = now - alert.since >= alert.rule.windowSeconds * 1000;
      if (!replaced && !expired) continue;
      const summary = replaced
        ? `a later deploy of ${alert.server} succeeded`
        : `${alert.summary} (${alert.rule.windowText} ago)`;
      this.record(key, { ...alert, state: 'resolved', resolvedAt: now, summary }, 'resolved', note);
    }
    const failed = await this.deps.store.listDeployments({ status: 'failed', limit: FAILED_LOOKED_AT });
    for (const record of failed) {
      const d = record.deployment;
      const endedAt = Date.parse(d.updated_at ?? d.created_at ?? '');
      if (this.seenFailed.has(d.deployment_id) || !(endedAt >= this.startedAt)) continue;
      this.seenFailed.add(d.deployment_id);
      const environment = d.environment ?? 'production';
      const rule = effectiveAlertRules(record.config.alerts, environment).find((r) => r.type === 'failed_rollout');
      if (rule === undefined) continue;
      const server = (await this.deps.store.getServer(record.mcpId))?.server.name ?? record.mcpId;
      const summary = `the deploy of ${server} to ${environment} (${d.deployment_id}) failed${d.reason === undefined ? '' : `: ${d.reason}`}`;
      const alert: AlertState = {
        deploymentId: d.deployment_id,
        server,
        environment,
        rule,
        state: 'firing',
        since: now,
        firedAt: now,
        value: null,
        summary,
      };
      const key = `${d.deployment_id}/${rule.name}`;
      this.runningAtFailure.set(key, new Set(snapshots.map((s) => s.deploymentId)));
      this.record(key, alert, 'fired', note);
    }
  }

  private async rulesOf(deploymentId: string, environment: string): Promise<AlertRule[]> {
    let rules = this.rules.get(deploymentId);
    if (rules === undefined) {
      const record = await this.deps.store.getDeployment(deploymentId);
      rules = effectiveAlertRules(record?.config.alerts, environment);
      // a deployment seen running before its record is readable gets its own rules at the next look,
      // not the environment's defaults for as long as it runs
      if (record !== undefined) this.rules.set(deploymentId, rules);
    }
    return rules;
  }

  private prune(live: ReadonlySet<string>, now: number): void {
    const longest = Math.max(3600, ...[...this.rules.values()].flat().map((rule) => rule.windowSeconds));
    this.windows.prune(now - longest * 1000);
    this.restarts.prune(live, now - longest * 1000);
    for (const id of this.rules.keys()) if (!live.has(id)) this.rules.delete(id);
    while (
      this.recent.length > RECENT_MAX ||
      (this.recent.length > 0 && now - this.recent.at(-1)!.resolvedAt! > RECENT_MS)
    )
      this.recent.pop();
  }

  /** Sends one deployment's changed alerts to every channel that takes its environment. */
  private send(alerts: AlertState[], now: number): void {
    for (const alert of alerts) alert.sentAt = now;
    const first = alerts[0]!;
    const group: AlertGroup = {
      deploymentId: first.deploymentId,
      server: first.server,
      environment: first.environment,
      status: alerts.some((a) => a.state === 'firing') ? 'firing' : 'resolved',
      alerts: alerts.map(viewOf),
    };
    for (const channel of this.deps.channels) {
      if (channel.environments !== undefined && !channel.environments.includes(group.environment)) continue;
      for (const message of messagesFor(channel, group, this.deps.engineUrl, now)) {
        const options = {
          retry: this.deps.retry ?? DEFAULT_RETRY,
          logger: this.deps.logger,
          signal: this.aborts.signal,
        };
        const send = this.deps.deliver ?? deliver;
        const sending = send(channel, message, options).finally(() => this.sending.delete(sending));
        this.sending.add(sending);
      }
    }
  }
}

function viewOf(alert: AlertState): Alert {
  return {
    deployment_id: alert.deploymentId,
    server: alert.server,
    environment: alert.environment,
    rule: alert.rule.name,
    type: alert.rule.type,
    severity: alert.rule.severity,
    state: alert.state,
    condition: describeRule(alert.rule),
    value: alert.value,
    summary: alert.summary,
    started_at: new Date(alert.since).toISOString(),
    ...(alert.resolvedAt === undefined ? {} : { resolved_at: new Date(alert.resolvedAt).toISOString() }),
  };
}
