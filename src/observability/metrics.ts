import { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process (not the prom-client global) so several nodes in one test process
 * keep their figures apart. Components create their metrics through these helpers.
 */
export class Metrics {
  readonly registry = new Registry();

  constructor(labels: Record<string, string> = {}, defaults = true) {
    this.registry.setDefaultLabels(labels);
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return (
      (this.registry.getSingleMetric(name) as Counter<L>) ??
      new Counter({ name, help, labelNames, registers: [this.registry] })
    );
  }

  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    buckets?: number[],
  ): Histogram<L> {
    return (
      (this.registry.getSingleMetric(name) as Histogram<L>) ??
      new Histogram({ name, help, labelNames, buckets, registers: [this.registry] })
    );
  }

  /** A gauge; with `read`, its value is read at each scrape (a size kept elsewhere, such as a map's). */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = [], read?: () => number): Gauge<L> {
    return (
      (this.registry.getSingleMetric(name) as Gauge<L>) ??
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        ...(read
          ? {
              collect(this: Gauge<L>) {
                this.set(read());
              },
            }
          : {}),
      })
    );
  }
}

/** prom-client's record of one label set (v15), which a kept child updates in place. */
interface HistogramRecord {
  labels: Record<string, unknown>;
  sum: number;
  count: number;
  bucketValues: Record<string, number>;
}
interface CounterRecord {
  labels: Record<string, unknown>;
  value: number;
}

/** A metric's records by label hash (prom-client's `hashMap`; a reset replaces the object). */
function recordsOf<R>(metric: object): Record<string, R> {
  return (metric as { hashMap: Record<string, R> }).hashMap;
}

/**
 * Where prom-client keeps the record of `labels` once an observation made it: the map and its key,
 * so a kept child can find it again without hashing (undefined if the map holds none).
 */
function findRecord<R extends { labels: Record<string, unknown> }>(
  metric: object,
  labels: Record<string, string>,
): { map: Record<string, R>; key: string; record: R } | undefined {
  const map = recordsOf<R>(metric);
  const names = Object.keys(labels);
  for (const key of Object.keys(map)) {
    const record = map[key]!;
    const have = Object.keys(record.labels);
    if (have.length === names.length && names.every((n) => String(record.labels[n]) === labels[n]))
      return { map, key, record };
  }
  return undefined;
}

/** prom-client's record of one label set, found once and kept while prom-client keeps it. */
abstract class KeptRecord<R extends { labels: Record<string, unknown> }> {
  private map?: Record<string, R>;
  private key = '';
  private record?: R;

  constructor(
    private readonly metric: object,
    protected readonly labels: Record<string, string>,
  ) {}

  /** The kept record, unless a reset or a removal replaced it since. */
  protected kept(): R | undefined {
    const record = this.record;
    const map = recordsOf<R>(this.metric);
    return record !== undefined && map === this.map && map[this.key] === record ? record : undefined;
  }

  /** After an update through prom-client: finds the record it made or updated. */
  protected find(): void {
    const found = findRecord<R>(this.metric, this.labels);
    this.map = found?.map;
    this.key = found?.key ?? '';
    this.record = found?.record;
  }
}

/**
 * A kept child of a histogram whose `observe` is a bucket search and three additions. prom-client's own
 * child validates and hashes its labels on every observation (two per hub call showed in B1's profile);
 * this one makes its first observation through prom-client, then updates prom-client's record of its
 * label set in place, so the exposition is prom-client's. A reset (a new record map), a record removed,
 * or a value prom-client refuses go through prom-client again (metrics.test.ts holds both kinds of child
 * to the same exposition).
 */
export class HistogramChild extends KeptRecord<HistogramRecord> {
  private readonly bounds: readonly number[];
  /** The buckets' keys in a record, as strings (a number key is converted on every access). */
  private readonly bucketKeys: readonly string[];

  constructor(
    private readonly histogram: Histogram<string>,
    labels: Record<string, string>,
  ) {
    super(histogram, labels);
    this.bounds = (histogram as unknown as { upperBounds: number[] }).upperBounds;
    this.bucketKeys = this.bounds.map(String);
  }

  observe(value: number): void {
    const record = this.kept();
    if (record === undefined || !Number.isFinite(value)) {
      this.histogram.observe(this.labels, value);
      return this.find();
    }
    record.sum += value;
    record.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        record.bucketValues[this.bucketKeys[i]!]! += 1;
        return;
      }
    }
  }
}

/** A kept child of a counter whose `inc` is one addition (see HistogramChild). */
export class CounterChild extends KeptRecord<CounterRecord> {
  constructor(
    private readonly counter: Counter<string>,
    labels: Record<string, string>,
  ) {
    super(counter, labels);
  }

  inc(by = 1): void {
    const record = this.kept();
    if (record === undefined || !(by >= 0) || !Number.isFinite(by)) {
      this.counter.inc(this.labels, by);
      return this.find();
    }
    record.value += by;
  }
}
