import type { Logger } from 'pino';
import type { Services } from '../app/index.js';
import type { Infra } from '../app/index.js';
import type { JobData, JobName } from '../contracts/job-definitions.js';

/** What a handler sees of a running job (no BullMQ types leak into job files). */
export interface JobRun<D> {
  id: string;
  data: D;
  /** Attempts already made before this one (0 on the first run). */
  attemptsMade: number;
  /** Reports progress (a percentage, or counters such as `{ done, total }`); queryable via services.jobs.get. */
  progress(p: number | Record<string, number>): Promise<void>;
  log: Logger;
}

export interface JobContext {
  infra: Infra;
  services: Services;
}

export type JobHandler<N extends JobName> = (job: JobRun<JobData<N>>, ctx: JobContext) => Promise<unknown>;
