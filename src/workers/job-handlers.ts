import { JOBS, isJobName, type JobName } from '../contracts/job-definitions.js';
import type { JobContext, JobHandler, JobRun } from './job-handler.js';

export type { JobContext } from './job-handler.js';

export interface JobHandlerEntry {
  name: JobName;
  /** Loaded lazily so a node only imports a handler's dependencies (sharp for thumbnails) when it runs workers. */
  load(): Promise<(job: JobRun<never>, ctx: JobContext) => Promise<unknown>>;
}

export type LoadedHandler = Awaited<ReturnType<JobHandlerEntry['load']>>;

function entry<N extends JobName>(name: N, load: () => Promise<JobHandler<N>>): JobHandlerEntry {
  return { name, load: load as JobHandlerEntry['load'] };
}

/**
 * THE job handlers: one entry per job name of core/job-definitions.ts `JOBS`. Add one line per job.
 * `loadJobHandlers` refuses to start the workers role unless every job has exactly one handler.
 */
export const JOB_HANDLERS: readonly JobHandlerEntry[] = [
  entry('recording', async () => (await import('./jobs/recording.job.js')).recordingJob),
  entry(
    'telemetry-completion',
    async () => (await import('./jobs/telemetry-completion.job.js')).telemetryCompletionJob,
  ),
  entry('thumbnail', async () => (await import('./jobs/thumbnail.job.js')).thumbnailJob),
  entry('pending-user-import', async () => (await import('./jobs/pending-user-import.job.js')).pendingUserImportJob),
  entry('webhook-delivery', async () => (await import('./jobs/webhook-delivery.job.js')).webhookDeliveryJob),
];

export class JobHandlersError extends Error {
  constructor(readonly problems: string[]) {
    super(`Job handlers are inconsistent:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'JobHandlersError';
  }
}

/** Checks the handlers against `JOBS` and loads every handler; throws JobHandlersError listing every problem. */
export async function loadJobHandlers(
  entries: readonly JobHandlerEntry[] = JOB_HANDLERS,
  jobs: Record<string, unknown> = JOBS,
): Promise<Map<JobName, LoadedHandler>> {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const e of entries) {
    seen.set(e.name, (seen.get(e.name) ?? 0) + 1);
    if (!isJobName(e.name) || !Object.hasOwn(jobs, e.name)) problems.push(`handler for unknown job '${e.name}'`);
  }
  for (const name of Object.keys(jobs)) {
    const n = seen.get(name) ?? 0;
    if (n !== 1) problems.push(`job '${name}' has ${n} handlers (exactly one required)`);
  }
  if (problems.length) throw new JobHandlersError(problems);
  const out = new Map<JobName, LoadedHandler>();
  for (const e of entries) {
    const handler = await e.load();
    if (typeof handler !== 'function') throw new JobHandlersError([`handler of '${e.name}' is not a function`]);
    out.set(e.name, handler);
  }
  return out;
}
