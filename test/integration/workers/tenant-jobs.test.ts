import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { settleNextJob } from '../../support/jobs.js';

const hash = (c: string) => c.repeat(64);

/**
 * The tenant administrator's view of the tenant's own jobs (decision 841) on real Redis: the queues are
 * shared by every tenant, and only jobs whose id and data name the caller's tenant are counted, listed
 * or retried. The node runs no workers; the test settles each job as a worker would.
 */
describe('tenant queue view: /api/admin/jobs', () => {
  let node: TestNode;
  const token: Record<string, string> = {};
  let acmeFailed: string;
  let otherFailed: string;

  const as = (who: string) => ({ tenant: who.split(':')[0]!, token: token[who]! });
  const mediaCounts = async (who: string) => {
    const r = await node.http.get('/api/admin/jobs/queues', as(who));
    expect(r.status).toBe(200);
    return r.body.queues.find((q: { queue: string }) => q.queue === 'media').counts;
  };

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    for (const [tenant, username, role] of [
      ['acme', 'ada', 'admin'],
      ['acme', 'cleo', 'clinician'],
      ['other', 'otto', 'admin'],
    ] as const) {
      await createUser(node, tenant, { username, role });
      token[`${tenant}:${role}`] = await tokenFor(node, tenant, username);
    }
    const jobs = node.services.jobs;
    // acme: one failed, one completed, one waiting; other: one failed with a reason only it may read.
    await jobs.enqueue('thumbnail', { tenant: 'acme', hash: hash('a') });
    acmeFailed = await settleNextJob(node, 'media', { fail: 'image could not be decoded' });
    await jobs.enqueue('thumbnail', { tenant: 'acme', hash: hash('b') });
    await settleNextJob(node, 'media', { complete: { ok: true } });
    await jobs.enqueue('thumbnail', { tenant: 'other', hash: hash('c') });
    otherFailed = await settleNextJob(node, 'media', { fail: 'OTHER-TENANT-SECRET reason' });
    // An id naming acme whose data names another tenant is not acme's job: never listed nor retried
    // (counted by its id, as counts read ids only).
    await jobs
      .queue('media')
      .add('thumbnail', { tenant: 'other', hash: hash('f') }, { jobId: 'thumbnail.acme.forged' });
    await settleNextJob(node, 'media', { fail: 'FORGED-DATA reason' });
    await jobs.enqueue('thumbnail', { tenant: 'acme', hash: hash('d') });
    await jobs.enqueue('thumbnail', { tenant: 'other', hash: hash('e') });
  }, 60_000);
  afterAll(async () => node?.destroy());

  it("counts only the tenant's jobs in each queue", async () => {
    expect(await mediaCounts('acme:admin')).toEqual({ waiting: 1, active: 0, delayed: 0, completed: 1, failed: 2 });
    expect(await mediaCounts('other:admin')).toEqual({ waiting: 1, active: 0, delayed: 0, completed: 0, failed: 1 });
    const all = await node.http.get('/api/admin/jobs/queues', as('acme:admin'));
    expect(all.body.queues.map((q: { queue: string }) => q.queue).sort()).toEqual(
      ['imports', 'media', 'recording', 'telemetry', 'webhooks'].sort(),
    );
  });

  it("lists the tenant's failed jobs with their reason, never another tenant's", async () => {
    const r = await node.http.get('/api/admin/jobs/failed', as('acme:admin'));
    expect(r.status).toBe(200);
    expect(r.body.jobs).toEqual([
      {
        id: acmeFailed,
        name: 'thumbnail',
        queue: 'media',
        state: 'failed',
        attemptsMade: 1,
        failedReason: 'image could not be decoded',
        finishedAt: expect.any(String),
        data: { tenant: 'acme', hash: hash('a') },
      },
    ]);
    expect(r.text).not.toContain('OTHER-TENANT-SECRET');
    expect(r.text).not.toContain('FORGED-DATA');
    const other = await node.http.get('/api/admin/jobs/failed?queue=media&take=5', as('other:admin'));
    expect(other.body.jobs.map((j: { id: string }) => j.id)).toEqual([otherFailed]);
    expect((await node.http.get('/api/admin/jobs/failed?queue=recording', as('acme:admin'))).body.jobs).toEqual([]);
  });

  it("retries the tenant's own failed job once; another tenant's job is not found and stays failed", async () => {
    const cross = await node.http.post(`/api/admin/jobs/failed/${otherFailed}/retry`, as('acme:admin'));
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('not_found');
    const forged = await node.http.post('/api/admin/jobs/failed/thumbnail.acme.forged/retry', as('acme:admin'));
    expect(forged.body.code).toBe('not_found');
    expect((await node.services.jobs.get('thumbnail', otherFailed))!.state).toBe('failed');

    const retried = await node.http.post(`/api/admin/jobs/failed/${acmeFailed}/retry`, as('acme:admin'));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: acmeFailed, state: 'waiting', attemptsMade: 0 });
    expect(await mediaCounts('acme:admin')).toMatchObject({ waiting: 2, failed: 1 });
    const again = await node.http.post(`/api/admin/jobs/failed/${acmeFailed}/retry`, as('acme:admin'));
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_state');
    expect(await mediaCounts('other:admin')).toEqual({ waiting: 1, active: 0, delayed: 0, completed: 0, failed: 1 });
  });

  it('is for tenant administrators only', async () => {
    for (const r of [
      await node.http.get('/api/admin/jobs/queues', as('acme:clinician')),
      await node.http.get('/api/admin/jobs/failed', as('acme:clinician')),
      await node.http.post(`/api/admin/jobs/failed/${acmeFailed}/retry`, as('acme:clinician')),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    }
    expect((await node.http.get('/api/admin/jobs/queues', { tenant: 'acme' })).status).toBe(401);
  });
});
