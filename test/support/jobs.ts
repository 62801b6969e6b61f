import { randomUUID } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import type { NodeHandle } from '../../src/composition/node.js';
import type { QueueName } from '../../src/contracts/job-definitions.js';

/**
 * Takes the next waiting job of `queue` the way a worker does (a BullMQ Worker without a processor, on
 * the node's queue connection and prefix) and ends it: failed for good with `fail` as its reason, or
 * completed (the job must be `expectId` when given). For nodes that run no workers role, so a test
 * decides each job's outcome.
 */
export async function settleNextJob(
  node: NodeHandle,
  queue: QueueName,
  outcome: { fail: string } | { complete: unknown },
  expectId?: string,
): Promise<string> {
  const q = node.services.jobs.queue(queue);
  const worker = new Worker(queue, null, { connection: q.opts.connection, prefix: q.opts.prefix, autorun: false });
  try {
    const token = randomUUID();
    const job = await worker.getNextJob(token, { block: false });
    if (!job) throw new Error(`no waiting job in ${queue}`);
    if (expectId && job.id !== expectId) throw new Error(`the next job in ${queue} is ${job.id}, not ${expectId}`);
    if ('fail' in outcome) await job.moveToFailed(new UnrecoverableError(outcome.fail), token, false);
    else await job.moveToCompleted(outcome.complete, token, false);
    return job.id!;
  } finally {
    await worker.close();
  }
}
