/**
 * The engine's metrics in Prometheus's text format (GET /metrics, prometheus-endpoint.ts): a
 * request observer feeds the MCP operation histogram and the gateway's bytes (plain numbers,
 * prometheus-series.ts); the deployments' instances and states, their restarts and the admission
 * queues are read when Prometheus scrapes. prom-client (a registry of the engine's own, never the
 * global one) is loaded by the first scrape. Label values are bounded: per deployment at most
 * MAX_TOOLS tool names and MAX_METHODS method names, later ones counted under OTHER_NAMES, and a
 * deployment gone for RETAIN_MS takes its series with it.
 */
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Metric, Registry } from 'prom-client';
import type { Admission } from '../admission.js';
import {
  DURATION_BUCKETS,
  MAX_METHODS,
  MAX_TOOLS,
  NO_METHOD,
  OPERATION_DURATION,
  OTHER_NAMES,
} from '../../shared/mcp-metrics.js';
import { errorTypeOf, type DeploymentSnapshot, type RequestEvent, type RequestObserver } from './events.js';
import { BucketSeries, counterMetric, CounterSeries, histogramMetric, type CustomMetric } from './prometheus-series.js';

export { MAX_METHODS, MAX_TOOLS, OTHER_NAMES };

/** How long the series of a deployment the engine no longer holds stay (several scrapes' worth). */
export const RETAIN_MS = 15 * 60_000;

const BASE_LABELS = ['deployment', 'server', 'environment'] as const;

type BaseLabels = Record<(typeof BASE_LABELS)[number], string>;
type RequestLabels = BaseLabels & { mcp_method_name: string; gen_ai_tool_name: string; error_type: string };

/** The `error_type` values, by their index in a tool's row of series. */
const ERROR_TYPES = ['', 'tool_error', 'client_gone', 'http_4xx', 'http_5xx'] as const;

/** What the scrape reads: the deployments in memory and the engine's queues. */
export interface MetricSources {
  snapshot?: (() => DeploymentSnapshot[]) | undefined;
  admission?: Admission | undefined;
}

interface Instruments {
  registry: Registry;
  instances: Gauge<(typeof BASE_LABELS)[number] | 'state'>;
  restarts: Counter<(typeof BASE_LABELS)[number]>;
  deployments: Gauge<'environment' | 'status'>;
  queueDepth: Gauge<'queue'>;
  queueRunning: Gauge<'queue'>;
}

/** The series of one method and tool, one per error type (by ERROR_TYPES' index), made on first use. */
interface Row {
  method: string;
  tool: string;
  series: Array<BucketSeries<RequestLabels> | undefined>;
}

/** One deployment's series: its label values made once, its histogram series by method, tool and error type. */
class DeploymentSeries {
  readonly labels: BaseLabels;
  /** method → tool ('' for none) → row; names past the limits share the row of OTHER_NAMES */
  private readonly byMethod = new Map<string, Map<string, Row>>();
  private methods = 0;
  private tools = 0;
  readonly durations: Array<BucketSeries<RequestLabels>> = [];
  readonly bytes: CounterSeries<BaseLabels>;
  /** the most restarts seen of each instance now running */
  readonly restartsSeen = new Map<string, number>();
  lastSeen: number;

  constructor(id: string, server: string, environment: string, now: number) {
    this.labels = { deployment: id, server, environment };
    this.bytes = new CounterSeries(this.labels);
    this.lastSeen = now;
  }

  record(event: RequestEvent): void {
    const method = event.method ?? NO_METHOD;
    const row = this.rowOf(this.toolsOf(method), method, event.tool ?? '');
    const errorType = errorTypeOf(event) ?? '';
    const index = ERROR_TYPES.indexOf(errorType);
    const series = (row.series[index] ??= this.newSeries(row, errorType));
    series.observe(event.latencyMs / 1000);
    if (event.bytesIn !== undefined && event.bytesIn > 0) this.bytes.value += event.bytesIn;
  }

  private toolsOf(method: string): Map<string, Row> {
    const known = this.byMethod.get(method);
    if (known !== undefined) return known;
    const name = this.methods < MAX_METHODS ? method : OTHER_NAMES;
    if (name === method) this.methods += 1;
    let tools = this.byMethod.get(name);
    if (tools === undefined) this.byMethod.set(name, (tools = new Map<string, Row>()));
    return tools;
  }

  private rowOf(tools: Map<string, Row>, method: string, tool: string): Row {
    const known = tools.get(tool);
    if (known !== undefined) return known;
    const name = tool === '' || this.tools < MAX_TOOLS ? tool : OTHER_NAMES;
    if (name === tool && tool !== '') this.tools += 1;
    let row = tools.get(name);
    const methodName = this.byMethod.get(method) === tools ? method : OTHER_NAMES;
    if (row === undefined) tools.set(name, (row = { method: methodName, tool: name, series: [] }));
    return row;
  }

  private newSeries(row: Row, errorType: string): BucketSeries<RequestLabels> {
    const labels = { ...this.labels, mcp_method_name: row.method, gen_ai_tool_name: row.tool, error_type: errorType };
    const series = new BucketSeries<RequestLabels>(labels, DURATION_BUCKETS);
    this.durations.push(series);
    return series;
  }
}

/** The exposition: an observer of the gateway's requests, and the text a scrape gets. */
export class PrometheusMetrics implements RequestObserver {
  private loading: Promise<Instruments> | undefined;
  private readonly series = new Map<string, DeploymentSeries>();

  constructor(
    private readonly sources: MetricSources,
    private readonly clock: () => number = Date.now,
  ) {}

  request(event: RequestEvent): void {
    let series = this.series.get(event.deploymentId);
    if (series === undefined) {
      series = new DeploymentSeries(event.deploymentId, event.server, event.environment, this.clock());
      this.series.set(event.deploymentId, series);
    }
    if (event.at > series.lastSeen) series.lastSeen = event.at;
    series.record(event);
  }

  /** The exposition's media type (text format 0.0.4). */
  get contentType(): string {
    return 'text/plain; version=0.0.4; charset=utf-8';
  }

  /** Every metric, as a scrape gets it: the gauges and restarts are read now. */
  async text(): Promise<string> {
    const m = await this.load();
    this.collect(m);
    return m.registry.metrics();
  }

  /** Forgets every series; the process metrics stop being collected. */
  close(): void {
    void this.loading?.then((m) => m.registry.clear()).catch(() => {});
    this.series.clear();
  }

  private load(): Promise<Instruments> {
    this.loading ??= import('prom-client').then((prom) => {
      const all = () => this.series.values();
      return makeInstruments(prom, [
        histogramMetric(
          OPERATION_DURATION,
          'MCP requests a deployment answered through the gateway, by method, tool and error type, and how long each took',
          DURATION_BUCKETS,
          function* () {
            for (const series of all()) yield* series.durations;
          },
        ),
        counterMetric(
          'mcpctl_gateway_request_bytes_total',
          "Bytes of the request bodies the gateway passed to a deployment's instances",
          function* () {
            for (const series of all()) if (series.bytes.value > 0) yield series.bytes;
          },
        ),
      ]);
    });
    return this.loading;
  }

  /** The gauges as they are now, the restarts since the last scrape, and the series of deployments long gone. */
  private collect(m: Instruments): void {
    const now = this.clock();
    const snapshots = this.sources.snapshot?.() ?? [];
    m.instances.reset();
    m.deployments.reset();
    const byStatus = new Map<string, { environment: string; status: string; count: number }>();
    for (const snapshot of snapshots) {
      const series = this.seriesOf(snapshot, now);
      this.collectInstances(m, series, snapshot);
      const key = `${snapshot.environment}\n${snapshot.status}`;
      const entry = byStatus.get(key) ?? { environment: snapshot.environment, status: snapshot.status, count: 0 };
      entry.count += 1;
      byStatus.set(key, entry);
    }
    for (const { environment, status, count } of byStatus.values()) m.deployments.set({ environment, status }, count);
    for (const [id, series] of this.series) {
      if (now - series.lastSeen < RETAIN_MS) continue;
      m.restarts.remove(series.labels);
      this.series.delete(id);
    }
    const admission = this.sources.admission;
    if (admission !== undefined) {
      for (const queue of ['starts', 'builds', 'tests'] as const) {
        const stats = admission[queue].stats();
        m.queueDepth.set({ queue }, stats.waiting);
        m.queueRunning.set({ queue }, stats.running);
      }
    }
  }

  private seriesOf(snapshot: DeploymentSnapshot, now: number): DeploymentSeries {
    let series = this.series.get(snapshot.deploymentId);
    if (series === undefined) {
      series = new DeploymentSeries(snapshot.deploymentId, snapshot.server, snapshot.environment, now);
      this.series.set(snapshot.deploymentId, series);
    }
    series.lastSeen = now;
    return series;
  }

  /** Instances by state (healthy always shown, 0 when none), and restarts as a counter that never goes down. */
  private collectInstances(m: Instruments, series: DeploymentSeries, snapshot: DeploymentSnapshot): void {
    const states = new Map<string, number>([['healthy', 0]]);
    let added = 0;
    const running = new Set<string>();
    for (const instance of snapshot.instances) {
      states.set(instance.state, (states.get(instance.state) ?? 0) + 1);
      running.add(instance.id);
      const seen = series.restartsSeen.get(instance.id) ?? 0;
      added += Math.max(0, instance.restarts - seen);
      series.restartsSeen.set(instance.id, Math.max(seen, instance.restarts));
    }
    // an instance gone has had its restarts counted
    for (const id of series.restartsSeen.keys()) if (!running.has(id)) series.restartsSeen.delete(id);
    m.restarts.inc(series.labels, added);
    for (const [state, count] of states) m.instances.set({ ...series.labels, state }, count);
  }
}

function makeInstruments(prom: typeof PromClient, own: CustomMetric[]): Instruments {
  const registry = new prom.Registry();
  const registers = [registry];
  // the registry writes any metric that gives what its own give (prometheus-series.ts)
  for (const metric of own) registry.registerMetric(metric as unknown as Metric);
  prom.collectDefaultMetrics({ register: registry, prefix: 'mcpctl_engine_' });
  // gauges named like counters (promtool's lint refuses them); the same counts by type stay, without `_total`
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
    registry.removeSingleMetric(`mcpctl_engine_nodejs_${name}`);
  }
  return {
    registry,
    instances: new prom.Gauge({
      name: 'mcpctl_instances',
      help: "A deployment's instances by state",
      labelNames: [...BASE_LABELS, 'state'],
      registers,
    }),
    restarts: new prom.Counter({
      name: 'mcpctl_instance_restarts_total',
      help: "Restarts of a deployment's instances after a crash or failed health checks",
      labelNames: BASE_LABELS,
      registers,
    }),
    deployments: new prom.Gauge({
      name: 'mcpctl_deployments',
      help: 'Deployments the engine holds, by environment and status',
      labelNames: ['environment', 'status'],
      registers,
    }),
    queueDepth: new prom.Gauge({
      name: 'mcpctl_admission_queue_depth',
      help: 'Work waiting for a slot in an admission queue (starts, builds, tests)',
      labelNames: ['queue'],
      registers,
    }),
    queueRunning: new prom.Gauge({
      name: 'mcpctl_admission_running',
      help: 'Work running in an admission queue (starts, builds, tests)',
      labelNames: ['queue'],
      registers,
    }),
  };
}
