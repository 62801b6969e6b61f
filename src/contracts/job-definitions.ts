import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Every BullMQ queue and every job the service runs, in one place. Queue and job names appear
 * nowhere else as literals: producers call `services.jobs.enqueue(name, data)` and the workers role
 * starts one Worker per queue that has jobs. A job's id is derived from its data (`jobId`), so
 * enqueueing the same work twice is a no-op while the first job is kept.
 *
 * To add a job: add its definition here and its handler in src/workers/job-handlers.ts (the boot check refuses a
 * definition without exactly one handler).
 */
export const QUEUE_NAMES = ['media', 'imports', 'recording', 'telemetry', 'webhooks'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

const Tenant = z.string().regex(/^[a-z0-9-]{2,40}$/);
const ObjectIdHex = z.string().regex(/^[a-f0-9]{24}$/);

/** Start or stop the recording of an event's conference; `session` numbers the start/stop pair. */
export const RecordingJobData = z.object({
  tenant: Tenant,
  eventId: ObjectIdHex,
  userId: ObjectIdHex,
  action: z.enum(['start', 'stop']),
  session: z.number().int().positive(),
});
export type RecordingJobData = z.infer<typeof RecordingJobData>;

/** Completes an event from the telemetry stored for one of its conferences. */
export const TelemetryCompletionJobData = z.object({
  tenant: Tenant,
  eventId: ObjectIdHex,
  conferenceId: z.string().min(1).max(200),
});
export type TelemetryCompletionJobData = z.infer<typeof TelemetryCompletionJobData>;

/** The most contents one thumbnail job renders (a tenant's burst of uploads shares jobs, decision 1187). */
export const THUMBNAIL_BATCH_MAX = 16;

const ContentHash = z.string().regex(/^[a-f0-9]{64}$/);

/**
 * Renders the thumbnails of a tenant's stored image content (by content hash): `hash`, then each of
 * `more` (the contents the producer coalesced into the same job; none in a job of one).
 */
export const ThumbnailJobData = z
  .object({
    tenant: Tenant,
    hash: ContentHash,
    more: z
      .array(ContentHash)
      .max(THUMBNAIL_BATCH_MAX - 1)
      .optional(),
  })
  .refine((d) => new Set([d.hash, ...(d.more ?? [])]).size === 1 + (d.more?.length ?? 0), {
    message: 'a content hash appears twice',
    path: ['more'],
  });
export type ThumbnailJobData = z.infer<typeof ThumbnailJobData>;

/** Imports the pending users of one uploaded spreadsheet (an Import record). */
export const PendingUserImportJobData = z.object({
  tenant: Tenant,
  importId: z.string().uuid(),
});
export type PendingUserImportJobData = z.infer<typeof PendingUserImportJobData>;

/**
 * Runs one delivery of a webhook subscription (src/core/webhooks/webhook-delivery.service.ts); `key`
 * names the wake-up (the run it follows, or the log head or sweep tick that caused it).
 */
export const WebhookDeliveryJobData = z.object({
  tenant: Tenant,
  subscriptionId: ObjectIdHex,
  key: z.string().regex(/^[A-Za-z0-9.]{1,60}$/),
});
export type WebhookDeliveryJobData = z.infer<typeof WebhookDeliveryJobData>;

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  queue: QueueName;
  data: S;
  /** The id of the work: the same data always maps to the same id (BullMQ refuses ':' in ids). */
  jobId(data: z.infer<S>): string;
  /** Overrides the configured attempt count. */
  attempts?: number;
}

function defineJob<S extends z.ZodType>(def: JobDefinition<S>): JobDefinition<S> {
  return def;
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');

export const JOBS = {
  recording: defineJob({
    queue: 'recording',
    data: RecordingJobData,
    jobId: (d) => `recording.${d.tenant}.${d.eventId}.${d.session}.${d.action}`,
  }),
  'telemetry-completion': defineJob({
    queue: 'telemetry',
    data: TelemetryCompletionJobData,
    jobId: (d) => `completion.${d.tenant}.${d.eventId}.${safe(d.conferenceId)}`,
  }),
  thumbnail: defineJob({
    queue: 'media',
    data: ThumbnailJobData,
    // A job of one keeps the id of its content; a coalesced job's id adds a digest of the others.
    jobId: (d) =>
      d.more?.length
        ? `thumbnail.${d.tenant}.${d.hash}.${createHash('sha256').update(d.more.join(',')).digest('hex').slice(0, 16)}`
        : `thumbnail.${d.tenant}.${d.hash}`,
  }),
  'pending-user-import': defineJob({
    queue: 'imports',
    data: PendingUserImportJobData,
    jobId: (d) => `import.${d.tenant}.${d.importId}`,
  }),
  'webhook-delivery': defineJob({
    queue: 'webhooks',
    data: WebhookDeliveryJobData,
    jobId: (d) => `webhook.${d.tenant}.${d.subscriptionId}.${d.key}`,
  }),
} satisfies Record<string, JobDefinition>;

export type JobName = keyof typeof JOBS;
export type JobData<N extends JobName> = z.infer<(typeof JOBS)[N]['data']>;

export function isJobName(name: string): name is JobName {
  return Object.hasOwn(JOBS, name);
}

/** Queues that carry at least one job (the workers role starts a Worker for each). */
export function activeQueues(): QueueName[] {
  return QUEUE_NAMES.filter((q) => Object.values(JOBS).some((j) => j.queue === q));
}
