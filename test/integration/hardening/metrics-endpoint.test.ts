import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';

/** /metrics is never served on the public port (any Host), only on the metrics listener. */
describe('metrics endpoint', () => {
  let open: TestNode;
  let guarded: TestNode;
  const token = 'scrape-token-0123456789abcdef';

  beforeAll(async () => {
    open = await startTestNode();
    await open.services.tenants.create({ name: 'acme', displayName: 'Acme Hospital' });
    guarded = await startTestNode({ METRICS_TOKEN: token });
  });
  afterAll(async () => {
    await open?.destroy();
    await guarded?.destroy();
  });

  it.each([
    ['the bare host', {}],
    ['a tenant host', { tenant: 'acme' }],
    ['an unknown host', { host: 'metrics.internal' }],
  ])('is not served on the public port for %s', async (_what, opts) => {
    const r = await open.http.get('/metrics', opts);
    expect(r.status).toBe(404);
    expect(r.text).not.toContain('process_cpu');
    expect(r.text).not.toContain('http_request_duration_seconds');
  });

  it('is served on its own loopback listener', async () => {
    expect(new URL(open.metricsUrl).hostname).toBe('127.0.0.1');
    expect(new URL(open.metricsUrl).port).not.toBe(new URL(open.url!).port);
    const r = await request(open.metricsUrl, 'GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.text).toContain('process_cpu');
    expect((await request(open.metricsUrl, 'GET', '/api/tenant/ping', { tenant: 'acme' })).status).toBe(404);
  });

  it('asks for the bearer token when one is configured', async () => {
    expect((await request(guarded.metricsUrl, 'GET', '/metrics')).status).toBe(401);
    expect((await request(guarded.metricsUrl, 'GET', '/metrics', { token: 'wrong-token-0123456789' })).status).toBe(
      401,
    );
    const ok = await request(guarded.metricsUrl, 'GET', '/metrics', { token });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('process_cpu');
  });
});
