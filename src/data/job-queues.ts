import { Queue, QueueEvents, type Job, type JobsOptions, type JobType } from 'bullmq';
import type { Config } from '../config/config.js';
import { AppError, fromZod } from '../kernel/errors.js';
import { createRedis, duplicateRedis, type RedisClient } from './redis.js';
import { redisKeys } from './redis-keys.js';
import { inSpan, injectTrace, SpanKind } from '../observability/tracing.js';
import { JOBS, QUEUE_NAMES, type JobData, type JobName, type QueueName } from '../contracts/job-definitions.js';

export interface JobQueueOptions {
  /** Connection with `maxRetriesPerRequest: null` (BullMQ requirement); shared by every Queue, closed by close(). */
  connection: RedisClient;
  prefix: string;
  attempts: number;
  backoffMs: number;
  /**
   * How long an enqueue may wait for Redis before the caller gets a retryable 503. The connection
   * retries without limit (BullMQ needs that), so without a deadline a request would hang during a
   * Redis outage; a late add is harmless because job ids are derived from the work.
   */
  enqueueTimeoutMs?: number;
}

function withDeadline<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError('service_unavailable', 'Job queue unavailable', { retryAfter: 5 })),
      ms,
    );
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** What callers see of a job: enough to show progress and failures without BullMQ types. */
export interface JobView {
  id: string;
  name: string;
  queue: QueueName;
  state: string;
  progress: unknown;
  attemptsMade: number;
  failedReason?: string;
  returnValue?: unknown;
  finishedAt?: string;
  /** The job's data (tenant views of the tenant's own jobs). */
  data?: unknown;
}

/** The states of the tenant queue view, and the BullMQ states each one covers. */
export const TENANT_JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
export type TenantJobState = (typeof TENANT_JOB_STATES)[number];
const BULLMQ_STATES = {
  waiting: ['wait', 'prioritized', 'waiting-children'],
  active: ['active'],
  delayed: ['delayed'],
  completed: ['completed'],
  failed: ['failed'],
} as const satisfies Record<TenantJobState, readonly JobType[]>;

/** The tenant a job id names: every id is `<kind>.<tenant>.<...>` (JOBS) and a tenant name has no dot. */
export function tenantOfJobId(id: string): string | undefined {
  const parts = id.split('.');
  return parts.length >= 3 ? parts[1] : undefined;
}

/** The id and the data both name the tenant. */
function ownedBy(job: Job, tenant: string): boolean {
  return tenantOfJobId(job.id ?? '') === tenant && (job.data as { tenant?: unknown } | undefined)?.tenant === tenant;
}

/**
 * The typed enqueue API (`services.jobs`). Job ids come from the work itself, so a retried request
 * or replayed telemetry does not queue the same work twice; completed jobs are kept a day (and
 * failed ones a week) so that dedup window and the failed list stay visible.
 */
export class JobQueues {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly events = new Map<QueueName, Promise<{ ev: QueueEvents; conn: RedisClient }>>();

  constructor(private readonly opts: JobQueueOptions) {}

  queue(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.opts.connection, prefix: this.opts.prefix });
      this.queues.set(name, q);
    }
    return q;
  }

  /** Validates `data` against the job's schema and enqueues it under its derived id. */
  async enqueue<N extends JobName>(
    name: N,
    data: JobData<N>,
    opts: Pick<JobsOptions, 'delay' | 'priority'> = {},
  ): Promise<{ id: string; queue: QueueName }> {
    const def = JOBS[name];
    const parsed = def.data.safeParse(data);
    if (!parsed.success) throw fromZod(parsed.error, `job.${name}`);
    const id = (def.jobId as (d: unknown) => string)(parsed.data);
    const attributes = { 'messaging.system': 'bullmq', 'messaging.destination.name': def.queue, 'job.name': name };
    await inSpan(
      `job enqueue ${name}`,
      { kind: SpanKind.PRODUCER, attributes: { ...attributes, 'job.id': id } },
      () => {
        // The producer's trace context travels in BullMQ's own telemetry option (decision 840).
        const trace = injectTrace();
        return withDeadline(
          this.opts.enqueueTimeoutMs ?? 5000,
          this.queue(def.queue).add(name, parsed.data, {
            ...opts,
            jobId: id,
            attempts: def.attempts ?? this.opts.attempts,
            backoff: { type: 'exponential', delay: this.opts.backoffMs },
            removeOnComplete: { age: 24 * 3600, count: 10_000 },
            removeOnFail: { age: 7 * 24 * 3600 },
            ...(trace ? { telemetry: { metadata: JSON.stringify(trace) } } : {}),
          }),
        );
      },
    );
    return { id, queue: def.queue };
  }

  async get(name: JobName, id: string): Promise<JobView | null> {
    const queue = JOBS[name].queue;
    const job = await this.queue(queue).getJob(id);
    return job ? view(job, queue) : null;
  }

  /** Jobs that exhausted their attempts, newest first: the failed state an operator looks at. */
  async failed(queues: readonly QueueName[] = QUEUE_NAMES, limit = 50): Promise<JobView[]> {
    const out: JobView[] = [];
    for (const queue of queues) {
      const jobs = await this.queue(queue).getFailed(0, limit - 1);
      out.push(...(await Promise.all(jobs.map((j) => view(j, queue)))));
    }
    return out.sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '')).slice(0, limit);
  }

  /**
   * One tenant's jobs in `queue`, counted by state (decision 841): the queues are shared by every
   * tenant, so the ids of each state are read (ids only, no job data) and only the tenant's are counted.
   */
  async tenantCounts(tenant: string, queue: QueueName): Promise<Record<TenantJobState, number>> {
    const q = this.queue(queue);
    const entries = await Promise.all(
      TENANT_JOB_STATES.map(async (state) => {
        const ids = await q.getRanges([...BULLMQ_STATES[state]], 0, -1);
        return [state, ids.filter((id) => tenantOfJobId(id) === tenant).length] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<TenantJobState, number>;
  }

  /**
   * One tenant's failed jobs (attempts exhausted), newest first, at most `limit` per queue and overall:
   * an id must name the tenant and the job's data must carry it, so no other tenant's job is ever read out.
   */
  async tenantFailed(tenant: string, queues: readonly QueueName[], limit: number): Promise<JobView[]> {
    const out: JobView[] = [];
    for (const queue of queues) {
      const q = this.queue(queue);
      const ids = (await q.getRanges(['failed'], 0, -1, false)).filter((id) => tenantOfJobId(id) === tenant);
      const jobs = await Promise.all(ids.slice(0, limit).map((id) => q.getJob(id)));
      for (const job of jobs)
        if (job && ownedBy(job, tenant)) out.push({ ...(await view(job, queue)), data: job.data as unknown });
    }
    return out.sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '')).slice(0, limit);
  }

  /**
   * Runs one of the tenant's failed jobs again (attempt count reset). A job of another tenant, or none,
   * is `not_found` (the same answer, so ids of other tenants cannot be probed); one that is not failed
   * is `invalid_state`.
   */
  async retryTenantFailed(tenant: string, id: string): Promise<JobView> {
    if (tenantOfJobId(id) === tenant) {
      for (const queue of QUEUE_NAMES) {
        const job = await this.queue(queue).getJob(id);
        if (!job || !ownedBy(job, tenant)) continue;
        const state = await job.getState();
        if (state !== 'failed') throw new AppError('invalid_state', `Job ${id} is ${state}, not failed`);
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        const fresh = await this.queue(queue).getJob(id);
        return view(fresh ?? job, queue);
      }
    }
    throw new AppError('not_found', `No job ${id}`);
  }

  async counts(queue: QueueName): Promise<Record<string, number>> {
    return this.queue(queue).getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
  }

  /**
   * Resolves with the job's view once it completed or failed for good; used by CLIs, demos and
   * tests to await work without polling.
   */
  async waitUntilFinished(name: JobName, id: string, timeoutMs = 30_000): Promise<JobView> {
    const queue = JOBS[name].queue;
    const events = await this.queueEvents(queue);
    const job = await this.queue(queue).getJob(id);
    if (!job) throw new AppError('not_found', `No job ${id}`);
    await job.waitUntilFinished(events, timeoutMs).catch(() => undefined);
    const fresh = await this.get(name, id);
    if (!fresh) throw new AppError('not_found', `Job ${id} was removed`);
    return fresh;
  }

  /**
   * Resolves once every job of `ids` completed or failed for good, or at `timeoutMs`: one event
   * listener for the whole set (a listener per job would see every job's events, n x n), and one state
   * read per job for those that finished before it listened. Failed jobs come with their reasons.
   */
  async waitForAll(
    name: JobName,
    ids: readonly string[],
    timeoutMs = 30_000,
  ): Promise<{ completed: number; failed: { id: string; reason?: string }[]; unfinished: string[] }> {
    const queue = JOBS[name].queue;
    const events = await this.queueEvents(queue);
    const pending = new Set(ids);
    const failedIds: string[] = [];
    let completed = 0;
    let allDone: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (allDone = resolve));
    const settle = (id: string, outcome: 'completed' | 'failed') => {
      if (!pending.delete(id)) return;
      if (outcome === 'completed') completed++;
      else failedIds.push(id);
      if (!pending.size) allDone();
    };
    const onCompleted = ({ jobId }: { jobId: string }) => settle(jobId, 'completed');
    const onFailed = ({ jobId }: { jobId: string }) => settle(jobId, 'failed');
    events.on('completed', onCompleted);
    events.on('failed', onFailed);
    let timer: NodeJS.Timeout | undefined;
    try {
      const q = this.queue(queue);
      await Promise.all(
        [...pending].map(async (id) => {
          const state = await q.getJobState(id);
          if (state === 'completed' || state === 'failed') settle(id, state);
        }),
      );
      if (pending.size)
        await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    } finally {
      clearTimeout(timer);
      events.off('completed', onCompleted);
      events.off('failed', onFailed);
    }
    const failed = await Promise.all(
      failedIds.map(async (id) => ({ id, reason: (await this.queue(queue).getJob(id))?.failedReason })),
    );
    return { completed, failed, unfinished: [...pending] };
  }

  private async queueEvents(queue: QueueName): Promise<QueueEvents> {
    let entry = this.events.get(queue);
    if (!entry) {
      entry = this.openEvents(queue);
      this.events.set(queue, entry);
      entry.catch(() => this.events.get(queue) === entry && this.events.delete(queue));
    }
    return (await entry).ev;
  }

  /**
   * The queue's event reader, starting after the stream's last event as of now. BullMQ's default
   * start ('$') is the last event when its first blocking read runs, which can be later: an event added
   * in between was never read, and a caller that listened and then checked a job's state missed the
   * job finishing (seen in CI as a waitForAll that waited out its limit).
   */
  private async openEvents(queue: QueueName): Promise<{ ev: QueueEvents; conn: RedisClient }> {
    const conn = duplicateRedis(this.opts.connection);
    try {
      const [last] = await conn.xrevrange(this.queue(queue).keys.events, '+', '-', 'COUNT', 1);
      const ev = new QueueEvents(queue, {
        connection: conn,
        prefix: this.opts.prefix,
        lastEventId: last?.[0] ?? '0-0',
      });
      await ev.waitUntilReady();
      return { ev, conn };
    } catch (e) {
      await conn.quit().catch(() => undefined);
      throw e;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      [...this.events.values()].map(async (entry) => {
        const e = await entry;
        await e.ev.close();
        await e.conn.quit();
      }),
    );
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.events.clear();
    this.queues.clear();
    await this.opts.connection.quit().catch(() => undefined);
  }
}

async function view(job: Job, queue: QueueName): Promise<JobView> {
  return {
    id: job.id!,
    name: job.name,
    queue,
    state: await job.getState(),
    progress: job.progress,
    attemptsMade: job.attemptsMade,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    ...(job.returnvalue !== undefined && job.returnvalue !== null ? { returnValue: job.returnvalue } : {}),
    ...(job.finishedOn ? { finishedAt: new Date(job.finishedOn).toISOString() } : {}),
  };
}

/** Builds the process's queues on their own BullMQ connection (`maxRetriesPerRequest: null`). */
export function createJobQueues(config: Config): JobQueues {
  return new JobQueues({
    connection: createRedis(config.redis.url, 'queues', { maxRetriesPerRequest: null, enableAutoPipelining: false }),
    prefix: redisKeys(config.redis.prefix, { cluster: config.redis.cluster }).queuePrefix,
    attempts: config.jobs.attempts,
    backoffMs: config.jobs.backoffMs,
  });
}
