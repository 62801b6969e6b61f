import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { settleNextJob } from '../../support/jobs.js';
import { JobQueues } from '../../../src/data/job-queues.js';
import { duplicateRedis, type RedisClient } from '../../../src/data/redis.js';

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

  it('sees a job that finished after its state was read but before the event reader first read', async () => {
    // The interleaving CI once hit, made certain: the new event reader's first blocking read (XREAD) is
    // held until the job's state was read (still waiting) and the job then completed.
    const base = duplicateRedis(node.services.jobs.queue('media').opts.connection as RedisClient);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let stateRead: () => void = () => undefined;
    const readState = new Promise<void>((resolve) => (stateRead = resolve));
    // Every client duplicated from `base` (and from those: BullMQ duplicates the reader's connection
    // again for its blocking reads) holds its XREADs until the gate opens.
    const holdReads = (c: RedisClient): RedisClient => {
      const duplicate = c.duplicate.bind(c) as (...a: unknown[]) => RedisClient;
      c.duplicate = ((...a: unknown[]) => {
        const d = holdReads(duplicate(...a));
        const send = d.sendCommand.bind(d);
        d.sendCommand = ((cmd: { name: string }) =>
          cmd.name === 'xread' ? gate.then(() => send(cmd as never)) : send(cmd as never)) as typeof d.sendCommand;
        return d;
      }) as typeof c.duplicate;
      return c;
    };
    holdReads(base);
    const sendBase = base.sendCommand.bind(base);
    base.sendCommand = ((cmd: { name: string }) => {
      const r = sendBase(cmd as never);
      if (cmd.name === 'evalsha' || cmd.name === 'eval') void Promise.resolve(r).finally(() => stateRead());
      return r;
    }) as typeof base.sendCommand;
    const fresh = new JobQueues({ connection: base, prefix: node.infra.keys.queuePrefix, attempts: 1, backoffMs: 10 });
    try {
      const { id } = await node.services.jobs.enqueue('thumbnail', { tenant: 'wfc', hash: hash('9') });
      const waiting = fresh.waitForAll('thumbnail', [id], 3000);
      await readState;
      await settleNextJob(node, 'media', { complete: { ok: true } }, id);
      release();
      expect(await waiting).toEqual({ completed: 1, failed: [], unfinished: [] });
    } finally {
      release();
      await fresh.close();
    }
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
