import { Gauge } from 'prom-client';
import type { Metrics } from '../observability/metrics.js';
import type { JobQueues } from '../data/job-queues.js';
import type { QueueName } from '../contracts/job-definitions.js';

/** The states an operator watches: work piling up (waiting, delayed), in flight (active), given up (failed). */
export const DEPTH_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/**
 * `jobs_queue_depth{queue,state}`, read from Redis at scrape time (one round trip per queue), so the
 * figure is the queue's, shared by every node, not this node's view of it. A scrape while Redis is
 * unreachable keeps the last figures and counts `jobs_queue_depth_errors_total` instead of failing the
 * whole scrape.
 */
export function registerQueueDepth(metrics: Metrics, queues: JobQueues, names: readonly QueueName[]): void {
  if (metrics.registry.getSingleMetric('jobs_queue_depth')) return;
  const errors = metrics.counter('jobs_queue_depth_errors_total', 'Scrapes that could not read a queue depth', [
    'queue',
  ]);
  new Gauge({
    name: 'jobs_queue_depth',
    help: 'Jobs in each queue by state (waiting, active, delayed, prioritized, failed), read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [metrics.registry],
    async collect() {
      await Promise.all(
        names.map(async (queue) => {
          try {
            const counts = await queues.queue(queue).getJobCounts(...DEPTH_STATES);
            for (const state of DEPTH_STATES) this.set({ queue, state }, counts[state] ?? 0);
          } catch {
            errors.inc({ queue });
          }
        }),
      );
    },
  });
}
