import { z } from 'zod';
import { QUEUE_NAMES } from '../../../contracts/job-definitions.js';
import { op, type RouteGroup } from '../route-spec.js';
import { IsoDate } from '../../presenters/common.presenter.js';
import type { JobView } from '../../../data/job-queues.js';

const QueueName = z.enum(QUEUE_NAMES);
const TAKE_MAX = 100;

export const TenantQueue = z.object({
  queue: QueueName,
  counts: z
    .object({
      waiting: z.number().int(),
      active: z.number().int(),
      delayed: z.number().int(),
      completed: z.number().int(),
      failed: z.number().int(),
    })
    .describe("the tenant's jobs in each state (completed ones are kept a day, failed ones a week)"),
});

export const FailedJobsQuery = z.object({
  queue: QueueName.optional().describe('only this queue'),
  take: z.coerce.number().int().min(1).max(TAKE_MAX).optional().describe(`default 20, at most ${TAKE_MAX}`),
});

export const TenantJob = z.object({
  id: z.string().describe('the job id: `<kind>.<tenant>.<the work it does>`'),
  name: z.string().describe('what the job does (recording, telemetry-completion, thumbnail, ...)'),
  queue: QueueName,
  state: z.string(),
  attemptsMade: z.number().int(),
  failedReason: z.string().optional().describe('why the last attempt failed'),
  finishedAt: IsoDate.optional(),
  data: z.record(z.string(), z.unknown()).optional().describe("the job's input"),
});

export const JobParams = z.object({ jobId: z.string().min(1).max(400) });

function presentJob(j: JobView) {
  return {
    id: j.id,
    name: j.name,
    queue: j.queue,
    state: j.state,
    attemptsMade: j.attemptsMade,
    ...(j.failedReason ? { failedReason: j.failedReason } : {}),
    ...(j.finishedAt ? { finishedAt: j.finishedAt } : {}),
    ...(j.data && typeof j.data === 'object' ? { data: j.data as Record<string, unknown> } : {}),
  };
}

/**
 * /api/admin/jobs: a tenant administrator's read-only view of the tenant's own background jobs (decision
 * 841): counts per queue, the failed ones with their reason, and a retry of one of them. The queues are
 * shared by every tenant; only jobs whose id and data name the caller's tenant are ever counted, shown
 * or retried. The deployment-wide dashboard stays the operator's (metrics listener).
 */
export const adminJobRoutes: RouteGroup = {
  base: '/api/admin/jobs',
  tag: 'Admin',
  routes: [
    op({
      operationId: 'jobs.queues',
      requires: 'tenant:admin',
      method: 'get',
      path: '/queues',
      response: z.object({ queues: z.array(TenantQueue) }),
      summary: "The tenant's jobs per queue, counted by state",
      handle: async (s, { p }) => ({
        queues: await Promise.all(
          QUEUE_NAMES.map(async (queue) => ({ queue, counts: await s.jobs.tenantCounts(p.tenant, queue) })),
        ),
      }),
    }),
    op({
      operationId: 'jobs.failed',
      requires: 'tenant:admin',
      method: 'get',
      path: '/failed',
      query: FailedJobsQuery,
      response: z.object({ jobs: z.array(TenantJob) }),
      summary: "The tenant's failed jobs (attempts exhausted), newest first, with the reason",
      handle: async (s, { p, query }) => ({
        jobs: (await s.jobs.tenantFailed(p.tenant, query.queue ? [query.queue] : QUEUE_NAMES, query.take ?? 20)).map(
          presentJob,
        ),
      }),
    }),
    op({
      operationId: 'jobs.retry',
      requires: 'tenant:admin',
      note: "only a job whose id and data name the caller's tenant",
      errors: ['not_found', 'invalid_state'],
      method: 'post',
      path: '/failed/:jobId/retry',
      params: JobParams,
      response: TenantJob,
      summary: "Run one of the tenant's failed jobs again (its attempts start over)",
      handle: async (s, { p, params }) => presentJob(await s.jobs.retryTenantFailed(p.tenant, params.jobId)),
    }),
  ],
};
