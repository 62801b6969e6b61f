import { describe, expect, it } from '@jest/globals';
import { JOB_HANDLERS, JobHandlersError, loadJobHandlers, type JobHandlerEntry } from './job-handlers.js';
import { JOBS } from '../contracts/job-definitions.js';

describe('job handlers boot check', () => {
  it('has exactly one handler per job of queues.ts', async () => {
    const handlers = await loadJobHandlers();
    expect([...handlers.keys()].sort()).toEqual(Object.keys(JOBS).sort());
  });

  it('refuses a job without a handler, a job with two, and a handler for an unknown job', async () => {
    const rec = JOB_HANDLERS.find((e) => e.name === 'recording')!;
    await expect(loadJobHandlers(JOB_HANDLERS.filter((e) => e !== rec))).rejects.toThrow(/'recording' has 0 handlers/);
    await expect(loadJobHandlers([...JOB_HANDLERS, rec])).rejects.toThrow(/'recording' has 2 handlers/);
    const unknown = { name: 'nope', load: rec.load } as unknown as JobHandlerEntry;
    await expect(loadJobHandlers([...JOB_HANDLERS, unknown])).rejects.toBeInstanceOf(JobHandlersError);
  });
});
