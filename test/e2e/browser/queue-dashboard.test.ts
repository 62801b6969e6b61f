import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { newEvent } from '../../support/events.js';
import { expectCleanPage, openBrowser, type BrowserFixture } from '../../support/browser.js';

/** The operator's queue dashboard (decision 841) in a real headless chromium, on real Redis. */
jest.setTimeout(240_000);

const TOKEN = 'queue-dashboard-browser-secret';

describe('queue dashboard in a browser', () => {
  let node: TestNode;
  let browser: BrowserFixture;
  let jobId: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'workers', JOBS_ATTEMPTS: '1', QUEUE_DASHBOARD_TOKEN: TOKEN });
    await node.services.tenants.create({ name: 'acme' });
    const event = await newEvent(node, 'acme');
    // A recording stop whose start never happened fails on its only attempt.
    ({ id: jobId } = await node.services.jobs.enqueue('recording', {
      tenant: 'acme',
      eventId: event._id.toHexString(),
      userId: new Types.ObjectId().toHexString(),
      action: 'stop',
      session: 1,
    }));
    expect((await node.services.jobs.waitUntilFinished('recording', jobId)).state).toBe('failed');
    browser = await openBrowser({ pageTimeoutMs: 60_000 });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await node?.destroy();
  });

  it('asks a browser without the credential to authenticate', async () => {
    const { page } = await browser.newPage();
    // Chromium answers the Basic challenge it cannot meet by refusing the navigation.
    await expect(page.goto(`${node.metricsUrl}/queues/`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    await page.authenticate({ username: 'operator', password: 'not-the-dashboard-token' });
    await expect(page.goto(`${node.metricsUrl}/queues/`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
  });

  it('shows the failed job to the operator and retries it from the page', async () => {
    const { page, watch } = await browser.newPage();
    await page.authenticate({ username: 'operator', password: TOKEN });
    const requested: string[] = [];
    page.on('request', (r) => void requested.push(r.url()));
    const res = await page.goto(`${node.metricsUrl}/queues/queue/recording?status=failed`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    await page.waitForSelector(`::-p-text(${jobId})`);
    // Everything the page loads comes from the listener itself (no font CDN), under the page's own policy.
    const origin = new URL(node.metricsUrl!).origin;
    expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
    const csp = res!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const failuresBefore = await node.infra.metrics.registry.getSingleMetricAsString('jobs_failed_total');
    expect(failuresBefore).toMatch(/final="true"[^\n]*\} 1/);
    const retried = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/retry'));
    // The job card's own Retry (the first action of a failed job's card, an icon titled "Retry"; not
    // the queue's "Retry all"), then the confirmation.
    await (await page.waitForSelector('ul[class^="jobActions"] li:first-child button'))!.click();
    await (await page.waitForSelector('::-p-xpath(//button[normalize-space(.)="Confirm"])'))!.click();
    expect((await retried).status()).toBe(204);
    // The job ran again (and failed again): a second final failure is counted.
    expect((await node.services.jobs.waitUntilFinished('recording', jobId)).state).toBe('failed');
    expect(await node.infra.metrics.registry.getSingleMetricAsString('jobs_failed_total')).toMatch(
      /final="true"[^\n]*\} 2/,
    );
    expectCleanPage(watch);
  });
});
