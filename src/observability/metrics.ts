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
