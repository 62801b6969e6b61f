import type { JobHandler } from '../job-handler.js';

/** Starts or stops an event's recording through the VCS port; on stop stores it as media of the event. */
export const recordingJob: JobHandler<'recording'> = (job, { services }) =>
  services.recording.runJob(job.data, (p) => job.progress(p));
