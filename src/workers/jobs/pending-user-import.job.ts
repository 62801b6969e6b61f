import { UnrecoverableError } from 'bullmq';
import { isAppError } from '../../core/errors.js';
import type { JobHandler } from '../catalogue.js';

/**
 * Streams an uploaded pending-users spreadsheet into upserts, reporting rows done as progress. A
 * rejected spreadsheet (limits, missing columns) fails at once: no retry can change the file.
 */
export const pendingUserImportJob: JobHandler<'pending-user-import'> = async (job, { services }) => {
  try {
    return await services.imports.run(job.data, (p) => job.progress(p));
  } catch (e) {
    if (isAppError(e) && (e.code === 'spreadsheet_rejected' || e.code === 'import_not_found')) throw new UnrecoverableError(`${e.code}: ${e.message}`);
    throw e;
  }
};
