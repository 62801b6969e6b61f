import { JOBS, isJobName, type JobName } from '../core/job-definitions.js';
import type { JobContext, JobHandler, JobRun } from './job-handler.js';

export type { JobContext } from './job-handler.js';


export interface CatalogueEntry {
  name: JobName;
  /** Loaded lazily so a node only imports a handler's dependencies (sharp, exceljs) when it runs workers. */
  load(): Promise<(job: JobRun<never>, ctx: JobContext) => Promise<unknown>>;
}

export type LoadedHandler = Awaited<ReturnType<CatalogueEntry['load']>>;

function entry<N extends JobName>(name: N, load: () => Promise<JobHandler<N>>): CatalogueEntry {
  return { name, load: load as CatalogueEntry['load'] };
}

/**
 * THE job catalogue: one entry per job name of queues.ts `JOBS`. Add one line per job.
 * `loadCatalogue` refuses to start the workers role unless every job has exactly one handler.
 */
export const CATALOGUE: readonly CatalogueEntry[] = [
  entry('recording', async () => (await import('./jobs/recording.job.js')).recordingJob),
  entry('telemetry-completion', async () => (await import('./jobs/telemetry-completion.job.js')).telemetryCompletionJob),
  entry('thumbnail', async () => (await import('./jobs/thumbnail.job.js')).thumbnailJob),
  entry('pending-user-import', async () => (await import('./jobs/pending-user-import.job.js')).pendingUserImportJob),
];

export class CatalogueError extends Error {
  constructor(readonly problems: string[]) {
    super(`Job catalogue is inconsistent:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'CatalogueError';
  }
}

/** Checks the catalogue against `JOBS` and loads every handler; throws CatalogueError listing every problem. */
export async function loadCatalogue(entries: readonly CatalogueEntry[] = CATALOGUE, jobs: Record<string, unknown> = JOBS): Promise<Map<JobName, LoadedHandler>> {
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
  if (problems.length) throw new CatalogueError(problems);
  const out = new Map<JobName, LoadedHandler>();
  for (const e of entries) {
    const handler = await e.load();
    if (typeof handler !== 'function') throw new CatalogueError([`handler of '${e.name}' is not a function`]);
    out.set(e.name, handler);
  }
  return out;
}
