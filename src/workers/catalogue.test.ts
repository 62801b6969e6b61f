import { describe, expect, it } from '@jest/globals';
import { CATALOGUE, CatalogueError, loadCatalogue, type CatalogueEntry } from './catalogue.js';
import { JOBS } from '../core/job-definitions.js';

describe('job catalogue boot check', () => {
  it('has exactly one handler per job of queues.ts', async () => {
    const handlers = await loadCatalogue();
    expect([...handlers.keys()].sort()).toEqual(Object.keys(JOBS).sort());
  });

  it('refuses a job without a handler, a job with two, and a handler for an unknown job', async () => {
    const rec = CATALOGUE.find((e) => e.name === 'recording')!;
    await expect(loadCatalogue(CATALOGUE.filter((e) => e !== rec))).rejects.toThrow(/'recording' has 0 handlers/);
    await expect(loadCatalogue([...CATALOGUE, rec])).rejects.toThrow(/'recording' has 2 handlers/);
    const unknown = { name: 'nope', load: rec.load } as unknown as CatalogueEntry;
    await expect(loadCatalogue([...CATALOGUE, unknown])).rejects.toBeInstanceOf(CatalogueError);
  });
});
