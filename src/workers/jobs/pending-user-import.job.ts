import type { JobHandler } from '../job-handler.js';

/**
 * Streams an uploaded pending-users spreadsheet into upserts, reporting rows done as progress. A
 * rejected spreadsheet (limits, missing columns) fails at once: its code is permanent in the error
 * error codes, so the workers role makes the job unrecoverable.
 */
export const pendingUserImportJob: JobHandler<'pending-user-import'> = (job, { services }) =>
  services.imports.run(job.data, (p) => job.progress(p));
