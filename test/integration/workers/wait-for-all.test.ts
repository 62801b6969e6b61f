import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { settleNextJob } from '../../support/jobs.js';

const hash = (c: string) => c.repeat(64);

/**
 * services.jobs.waitForAll on real Redis: one listener for a set of jobs, which counts the jobs that
 * finished before it listened, those that finish after, failures with their reasons, and says which
 * did not finish in time. The node runs no workers; the test settles each job as a worker would.
 */
describe('waiting for a set of jobs', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
  });
  afterAll(async () => node?.destroy());

  it('counts jobs finished before and after it listened, with the reasons of the failed ones', async () => {
    const jobs = node.services.jobs;
    const ids: string[] = [];
    for (const c of 'abcd') ids.push((await jobs.enqueue('thumbnail', { tenant: 'wfa', hash: hash(c) })).id);
    await settleNextJob(node, 'media', { complete: { ok: true } }, ids[0]);
    await settleNextJob(node, 'media', { fail: 'first reason' }, ids[1]);
    const waiting = jobs.waitForAll('thumbnail', ids, 20_000);
    let settled = false;
    void waiting.then(() => (settled = true));
    await settleNextJob(node, 'media', { complete: { ok: true } }, ids[2]);
    // Three of four finished: still waiting (the state reads and the event both had their chance).
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await settleNextJob(node, 'media', { fail: 'second reason' }, ids[3]);
    const r = await waiting;
    expect(r.completed).toBe(2);
    expect(r.unfinished).toEqual([]);
    expect(r.failed.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: ids[1], reason: 'first reason' },
        { id: ids[3], reason: 'second reason' },
      ].sort((a, b) => a.id!.localeCompare(b.id!)),
    );
  });

  it('gives up at its time limit and names the jobs that did not finish', async () => {
    const jobs = node.services.jobs;
    const done = (await jobs.enqueue('thumbnail', { tenant: 'wfb', hash: hash('e') })).id;
    const open = (await jobs.enqueue('thumbnail', { tenant: 'wfb', hash: hash('f') })).id;
    await settleNextJob(node, 'media', { complete: { ok: true } }, done);
    const r = await jobs.waitForAll('thumbnail', [done, open], 300);
    expect(r).toEqual({ completed: 1, failed: [], unfinished: [open] });
    await settleNextJob(node, 'media', { complete: { ok: true } }, open);
  });
});
