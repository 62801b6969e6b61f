import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { newEvent } from '../../support/events.js';

const TOKEN = 'queue-dashboard-operator-secret';
const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

/**
 * Queue insight on real Redis (decision 841): the depth of each queue by state and the wait before a
 * job's first attempt in /metrics, and the operator's dashboard on the metrics listener, which refuses
 * callers without the dashboard credential, lists a failed job and retries it.
 */
describe('queue depth metrics and the operator queue dashboard', () => {
  let node: TestNode;
  const userId = new Types.ObjectId().toHexString();

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'workers', JOBS_ATTEMPTS: '1', QUEUE_DASHBOARD_TOKEN: TOKEN });
    await node.services.tenants.create({ name: 'acme' });
  });
  afterAll(async () => node?.destroy());

  const scrape = async () => (await fetch(`${node.metricsUrl}/metrics`)).text();
  /** The value of metric `name` on the line carrying every one of `labels` (nodes add default labels). */
  const value = (text: string, name: string, labels: Record<string, string>) => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const depth = (text: string, state: string) => value(text, 'jobs_queue_depth', { queue: 'recording', state });
  const finalFailures = (text: string) =>
    value(text, 'jobs_failed_total', { queue: 'recording', job: 'recording', final: 'true' });
  const dashboard = (path: string, init: RequestInit = {}, auth = basic(TOKEN)) =>
    fetch(`${node.metricsUrl}/queues${path}`, { ...init, headers: { authorization: auth, ...init.headers } });

  /** A recording stop whose start never happened: the job fails (its only attempt). */
  async function failingJob(session: number) {
    const event = await newEvent(node, 'acme');
    return node.services.jobs.enqueue('recording', {
      tenant: 'acme',
      eventId: event._id.toHexString(),
      userId,
      action: 'stop',
      session,
    });
  }

  it('shows the depth of each queue change as jobs fail and wait, and the wait before a first attempt', async () => {
    const before = await scrape();
    expect(depth(before, 'failed')).toBe(0);
    expect(depth(before, 'delayed')).toBe(0);
    const { id } = await failingJob(1);
    expect((await node.services.jobs.waitUntilFinished('recording', id)).state).toBe('failed');
    const event = await newEvent(node, 'acme');
    await node.services.jobs.enqueue(
      'recording',
      { tenant: 'acme', eventId: event._id.toHexString(), userId, action: 'start', session: 7 },
      { delay: 3_600_000 },
    );
    const after = await scrape();
    expect(depth(after, 'failed')).toBe(1);
    expect(depth(after, 'delayed')).toBe(1);
    expect(value(after, 'job_wait_seconds_count', { queue: 'recording', job: 'recording' })).toBe(1);
    expect(finalFailures(after)).toBe(1);
  });

  it('refuses the dashboard without its credential', async () => {
    const none = await fetch(`${node.metricsUrl}/queues/`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="queues"/);
    expect((await dashboard('/api/queues', {}, basic('not-the-dashboard-token'))).status).toBe(401);
    expect((await dashboard('/api/queues', {}, `Bearer ${TOKEN}x`)).status).toBe(401);
    expect((await dashboard('/api/queues', { method: 'PUT' }, '')).status).toBe(401);
    expect((await dashboard('/', {}, `Bearer ${TOKEN}`)).status).toBe(200);
  });

  it('lists a failed job and retries it: the job runs again', async () => {
    const { id } = await failingJob(2);
    expect((await node.services.jobs.waitUntilFinished('recording', id)).state).toBe('failed');
    const listed = (await (await dashboard('/api/queues?activeQueue=recording&status=failed')).json()) as {
      queues: { name: string; jobs: { id: string; failedReason?: string }[] }[];
    };
    const recording = listed.queues.find((q) => q.name === 'recording')!;
    expect(recording.jobs.find((j) => j.id === id)?.failedReason).toMatch(/not started yet/);

    const failedTotal = () => scrape().then(finalFailures);
    const failures = await failedTotal();
    const retried = await dashboard(`/api/queues/recording/${encodeURIComponent(id)}/retry`, { method: 'PUT' });
    expect(retried.status).toBeLessThan(300);
    expect((await node.services.jobs.waitUntilFinished('recording', id)).state).toBe('failed');
    // The retried job ran (and failed) once more: one more final failure counted.
    expect(await failedTotal()).toBe(failures! + 1);
  });
});
