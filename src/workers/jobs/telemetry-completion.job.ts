import type { JobHandler } from '../job-handler.js';

/** Completes an event from its conference telemetry: status, ledger, flags and the meetingEvent push. */
export const telemetryCompletionJob: JobHandler<'telemetry-completion'> = (job, { services }) =>
  services.completion.complete(job.data, (p) => job.progress(p));
