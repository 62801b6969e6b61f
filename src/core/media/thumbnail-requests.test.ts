import { describe, it, expect } from '@jest/globals';
import { ThumbnailRequests } from './thumbnail-requests.js';
import { JOBS, type ThumbnailJobData } from '../../contracts/job-definitions.js';

const h = (n: number) => n.toString(16).padStart(64, '0');

/** An enqueue whose calls stay open until released, recording the job data each was given. */
function gate() {
  const calls: { data: ThumbnailJobData; release(fail?: Error): void }[] = [];
  const enqueue = (data: ThumbnailJobData) =>
    new Promise<{ id: string }>((resolve, reject) =>
      calls.push({ data, release: (fail) => (fail ? reject(fail) : resolve({ id: JOBS.thumbnail.jobId(data) })) }),
    );
  return { calls, enqueue };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('ThumbnailRequests: a tenant burst shares jobs, a lone request waits for nothing', () => {
  it('sends a lone request at once in a job of one, under the id of its content', async () => {
    const g = gate();
    const requests = new ThumbnailRequests(g.enqueue);
    const answer = requests.request('acme', h(1));
    expect(g.calls.map((c) => c.data)).toEqual([{ tenant: 'acme', hash: h(1) }]);
    g.calls[0]!.release();
    expect(await answer).toEqual({ id: `thumbnail.acme.${h(1)}` });
  });

  it('carries the requests made while one is on its way in jobs of at most the maximum, each content once', async () => {
    const g = gate();
    const requests = new ThumbnailRequests(g.enqueue, 3);
    const first = requests.request('acme', h(1));
    const burst = [2, 3, 2, 4, 5].map((n) => requests.request('acme', h(n)));
    const other = requests.request('zeta', h(9)); // another tenant's lane is not held up
    expect(g.calls.map((c) => c.data)).toEqual([
      { tenant: 'acme', hash: h(1) },
      { tenant: 'zeta', hash: h(9) },
    ]);
    g.calls[0]!.release();
    await first;
    await flush();
    expect(g.calls.slice(2).map((c) => c.data)).toEqual([
      { tenant: 'acme', hash: h(2), more: [h(3), h(4)] },
      { tenant: 'acme', hash: h(5) },
    ]);
    for (const c of g.calls.slice(1)) c.release();
    const ids = await Promise.all([...burst, other]);
    const batch = JOBS.thumbnail.jobId({ tenant: 'acme', hash: h(2), more: [h(3), h(4)] });
    expect(ids.map((r) => r.id)).toEqual([
      batch,
      batch,
      batch, // the content asked twice rides in one job
      batch,
      `thumbnail.acme.${h(5)}`,
      `thumbnail.zeta.${h(9)}`,
    ]);
    expect(batch).toMatch(new RegExp(`^thumbnail\\.acme\\.${h(2)}\\.[0-9a-f]{16}$`));
    // Idle again: the next request goes alone at once.
    await flush();
    void requests.request('acme', h(7));
    expect(g.calls.at(-1)!.data).toEqual({ tenant: 'acme', hash: h(7) });
  });

  it('answers each request with its own job enqueue error, and the lane goes on', async () => {
    const g = gate();
    const requests = new ThumbnailRequests(g.enqueue, 2);
    const first = requests.request('acme', h(1));
    const a = requests.request('acme', h(2));
    const b = requests.request('acme', h(3));
    const c = requests.request('acme', h(4));
    g.calls[0]!.release(new Error('queue down'));
    await expect(first).rejects.toThrow('queue down');
    await flush();
    expect(g.calls.slice(1).map((x) => x.data)).toEqual([
      { tenant: 'acme', hash: h(2), more: [h(3)] },
      { tenant: 'acme', hash: h(4) },
    ]);
    g.calls[1]!.release(new Error('deadline'));
    g.calls[2]!.release();
    await expect(a).rejects.toThrow('deadline');
    await expect(b).rejects.toThrow('deadline');
    expect(await c).toEqual({ id: `thumbnail.acme.${h(4)}` });
  });

  it('refuses job data naming a content twice or more contents than a job carries', () => {
    expect(JOBS.thumbnail.data.safeParse({ tenant: 'acme', hash: h(1), more: [h(1)] }).success).toBe(false);
    const many = Array.from({ length: 16 }, (_, i) => h(i + 2));
    expect(JOBS.thumbnail.data.safeParse({ tenant: 'acme', hash: h(1), more: many }).success).toBe(false);
    expect(JOBS.thumbnail.data.safeParse({ tenant: 'acme', hash: h(1), more: many.slice(1) }).success).toBe(true);
  });
});
