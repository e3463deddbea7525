/**
 * The per-request series of the exposition, kept without prom-client's per-call work: a
 * prom-client histogram child checks and hashes its labels on every observe (about 2 µs a
 * request), where these add to numbers the series was made with (tens of ns, no allocation).
 * prom-client's registry still writes them: it renders any metric whose `get()` gives the shape
 * its own metrics give (name, help, type and values), so the text stays prom-client's.
 */

/** One histogram series: counts per bucket (not cumulative), their sum and count. */
export class BucketSeries<L extends Record<string, string>> {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: L,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

/** A counter series. */
export class CounterSeries<L extends Record<string, string>> {
  value = 0;
  constructor(readonly labels: L) {}
}

interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** What prom-client's registry reads of a metric. */
export interface CustomMetric {
  name: string;
  help: string;
  type: 'histogram' | 'counter';
  get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: 'sum' }>;
}

/** A histogram of the series `all()` gives when scraped, with cumulative buckets as Prometheus reads them. */
export function histogramMetric<L extends Record<string, string>>(
  name: string,
  help: string,
  bounds: readonly number[],
  all: () => Iterable<BucketSeries<L>>,
): CustomMetric {
  return {
    name,
    help,
    type: 'histogram',
    get: () => {
      const values: Value[] = [];
      for (const series of all()) {
        let cumulative = 0;
        for (let i = 0; i < bounds.length; i++) {
          cumulative += series.counts[i]!;
          values.push({
            labels: { le: bounds[i]!, ...series.labels },
            value: cumulative,
            metricName: `${name}_bucket`,
          });
        }
        values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${name}_bucket` });
        values.push({ labels: series.labels, value: series.sum, metricName: `${name}_sum` });
        values.push({ labels: series.labels, value: series.count, metricName: `${name}_count` });
      }
      return Promise.resolve({ name, help, type: 'histogram', values, aggregator: 'sum' });
    },
  };
}

/** A counter of the series `all()` gives when scraped. */
export function counterMetric<L extends Record<string, string>>(
  name: string,
  help: string,
  all: () => Iterable<CounterSeries<L>>,
): CustomMetric {
  return {
    name,
    help,
    type: 'counter',
    get: () => {
      const values: Value[] = [];
      for (const series of all()) values.push({ labels: series.labels, value: series.value });
      return Promise.resolve({ name, help, type: 'counter', values, aggregator: 'sum' });
    },
  };
}
