import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { RoleContext, RoleHandle } from '../app/index.js';
import { isPermanent } from '../kernel/errors.js';
import { runWithContext } from '../observability/context.js';
import { SpanKind, startSpan, traceIdOf, type TraceCarrier } from '../observability/tracing.js';
import { loadJobHandlers, type JobContext, type LoadedHandler } from './job-handlers.js';
import { JOBS, activeQueues, isJobName, type QueueName } from '../contracts/job-definitions.js';
import type { AuditCheckpointer } from '../core/audit/audit-checkpointer.js';
import { registerQueueDepth } from './queue-metrics.js';
import { actorClientFor } from '../actors/runtime/node-system.js';

/**
 * The 'workers' role: checks the job handlers (refusing to start when a job lacks its one handler),
 * finds or starts an actor client (the completion job asks the meeting actors), then runs one BullMQ Worker
 * per queue.
 * Stalled jobs (a worker died holding one) are taken back after the lock expires and run again by any
 * worker; handlers are idempotent.
 */
export async function startWorkersRole(ctx: RoleContext): Promise<RoleHandle> {
  const { infra } = ctx;
  const handlers = await loadJobHandlers();
  const cfg = infra.config.jobs;
  // The telemetry completion job is a turn of the event's meeting actor (decision 1090): asked through this
  // node's actor system, or a client-only one started here (before the first job runs), which this role's
  // handle offers to services.meetingRooms.
  const meetings = await actorClientFor(ctx);
  const connection = infra.connectRedis('workers', { maxRetriesPerRequest: null, enableAutoPipelining: false });
  const jobCtx: JobContext = { infra, services: ctx.services };
  const workers = activeQueues().map((queue) => {
    const worker = new Worker(queue, (job) => process(job, handlers, jobCtx), {
      connection,
      prefix: infra.keys.queuePrefix,
      concurrency: cfg.concurrency,
      lockDuration: cfg.lockMs,
      stalledInterval: cfg.lockMs,
      maxStalledCount: 1,
    });
    observe(worker, queue, ctx);
    return worker;
  });
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const checkpoints = startAuditCheckpoints(ctx);
  registerQueueDepth(infra.metrics, infra.queues, activeQueues());
  const sweeper = startWebhookSweeper(ctx);
  infra.logger.info({ component: 'workers', queues: activeQueues(), jobs: [...handlers.keys()] }, 'workers started');
  return {
    actorClient: meetings.system,
    async stop() {
      await checkpoints?.stop();
      await sweeper.stop();
      await Promise.allSettled(workers.map((w) => w.close()));
      await connection.quit().catch(() => undefined);
      await meetings.stop?.();
    },
  };
}

/** The periodic signed checkpoint of every tenant's audit chain (AUDIT_CHECKPOINT_INTERVAL_SECONDS; 0 = off). */
function startAuditCheckpoints(ctx: RoleContext): AuditCheckpointer | undefined {
  if (!ctx.infra.config.audit.checkpointIntervalSeconds) return undefined;
  const checkpointer = ctx.services.auditCheckpoints;
  checkpointer.start();
  return checkpointer;
}

async function process(job: Job, handlers: Map<string, LoadedHandler>, ctx: JobContext): Promise<unknown> {
  const handler = handlers.get(job.name);
  if (!handler || !isJobName(job.name)) throw new UnrecoverableError(`no handler for job '${job.name}'`);
  const parsed = JOBS[job.name].data.safeParse(job.data);
  if (!parsed.success)
    throw new UnrecoverableError(`invalid data for '${job.name}': ${parsed.error.issues[0]?.message}`);
  const data = parsed.data as { tenant?: string };
  const log = ctx.infra.logger.child({
    component: 'job',
    job: job.name,
    jobId: job.id,
    tenant: data.tenant,
    attempt: job.attemptsMade + 1,
  });
  const parent = producerTrace(job);
  const span = startSpan(`job run ${job.name}`, {
    kind: SpanKind.CONSUMER,
    parent,
    attributes: {
      'messaging.system': 'bullmq',
      'messaging.destination.name': job.queueName,
      'job.name': job.name,
      'job.id': job.id ?? '',
      'job.attempt': job.attemptsMade + 1,
      ...(data.tenant ? { tenant: data.tenant } : {}),
    },
  });
  const correlationId = span.traceId ?? traceIdOf(parent?.traceparent) ?? `job-${job.id}`;
  return span
    .run(() =>
      runWithContext({ correlationId, tenant: data.tenant, component: 'job' }, async () => {
        try {
          return await handler(
            {
              id: job.id!,
              data: parsed.data as never,
              attemptsMade: job.attemptsMade,
              progress: (p) => job.updateProgress(p),
              log,
            },
            ctx,
          );
        } catch (e) {
          // A code the error codes call permanent fails the job at once instead of burning its attempts.
          if (isPermanent(e)) throw new UnrecoverableError(`${e.code}: ${e.message}`);
          throw e;
        }
      }),
    )
    .then(
      (v) => (span.end(), v),
      (e) => (span.end(e), Promise.reject(e)),
    );
}

/** The enqueuer's trace context, from BullMQ's telemetry option (set by JobQueues.enqueue). */
function producerTrace(job: Job): TraceCarrier | undefined {
  const raw = job.opts.telemetry?.metadata;
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as TraceCarrier;
  } catch {
    return undefined;
  }
}

/**
 * Every workers node sweeps the outboxes and the subscriptions on a timer (decision 890): what a
 * crashed writer left unpublished, and deliveries whose queued job was lost or whose worker died.
 * Sweeps are idempotent, so several nodes sweeping costs reads, never a duplicate.
 */
function startWebhookSweeper(ctx: RoleContext): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = ctx.services.webhooks.relay
      .sweep()
      .catch((err: Error) => ctx.infra.logger.warn({ component: 'webhooks', err: err.message }, 'webhook sweep failed'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, ctx.infra.config.webhooks.sweepMs);
  tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** Metrics per job name (wait before the first attempt, completed, failed, duration) and a log line for every failure after the last attempt. */
function observe(worker: Worker, queue: QueueName, ctx: RoleContext): void {
  const m = ctx.infra.metrics;
  const completed = m.counter('jobs_completed_total', 'Jobs completed', ['queue', 'job']);
  const failed = m.counter('jobs_failed_total', 'Job attempts failed; final="true" once no attempt is left', [
    'queue',
    'job',
    'final',
  ]);
  const duration = m.histogram(
    'job_duration_seconds',
    'Job run time',
    ['queue', 'job'],
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const wait = m.histogram(
    'job_wait_seconds',
    'Time from enqueue (or the end of its delay) to the start of the first attempt',
    ['queue', 'job'],
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  );
  const log = ctx.infra.logger.child({ component: 'workers', queue });
  worker.on('active', (job) => {
    if (job.attemptsMade > 0) return;
    const ready = job.timestamp + (job.opts.delay ?? 0);
    wait.observe({ queue, job: job.name }, Math.max(0, (job.processedOn ?? Date.now()) - ready) / 1000);
  });
  worker.on('completed', (job) => {
    completed.inc({ queue, job: job.name });
    if (job.processedOn && job.finishedOn)
      duration.observe({ queue, job: job.name }, (job.finishedOn - job.processedOn) / 1000);
  });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    failed.inc({ queue, job: job.name, final: String(final) });
    const fields = { job: job.name, jobId: job.id, attemptsMade: job.attemptsMade, reason: err.message };
    if (final) log.error(fields, 'job failed after its last attempt');
    else log.warn(fields, 'job attempt failed; will retry');
  });
  worker.on('error', (err) => log.warn({ err: err.message }, 'worker error'));
}
