import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../support/node.js';
import { request } from '../support/http.js';

describe('foundation over HTTP', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'acme', displayName: 'Acme Hospital' });
  });
  afterAll(async () => node.destroy());

  it('answers ping for the tenant named by the host', async () => {
    const r = await node.http.get('/api/tenant/ping', { tenant: 'acme' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ tenant: 'acme', displayName: 'Acme Hospital', status: 'ok' });
    expect(r.headers['x-correlation-id']).toBeTruthy();
  });

  it('answers an unknown tenant host with a 404 problem', async () => {
    const r = await node.http.get('/api/tenant/ping', { tenant: 'nobody' });
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(r.body).toMatchObject({
      status: 404,
      code: 'tenant_not_found',
      type: 'urn:consult:problem:tenant_not_found',
    });
    expect(r.body.correlationId).toBe(r.headers['x-correlation-id']);
  });

  it('refuses tenant routes on the bare host', async () => {
    const r = await node.http.get('/api/tenant/ping');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('tenant_not_found');
  });

  it('answers unknown routes with a 404 problem', async () => {
    const r = await node.http.get('/api/nothing/here', { tenant: 'acme' });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('route_not_found');
  });

  it('answers malformed JSON with 400 and an oversized body with 413', async () => {
    const bad = await node.http.post('/api/admin/migrate/acme?code=x', {
      rawBody: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('malformed_json');
    const big = await node.http.post('/api/admin/migrate/acme?code=x', {
      rawBody: JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
  });

  it('keeps the caller correlation id when well-formed', async () => {
    const r = await node.http.get('/api/tenant/ping', { tenant: 'acme', headers: { 'x-correlation-id': 'abc-123' } });
    expect(r.headers['x-correlation-id']).toBe('abc-123');
  });

  it('reports liveness, readiness per dependency and metrics', async () => {
    const h = await node.http.get('/healthz');
    expect(h.status).toBe(200);
    const r = await node.http.get('/readyz');
    expect(r.status).toBe(200);
    expect(r.body.checks.redis.status).toBe('up');
    expect(r.body.checks.mongodb.status).toBe('up');
    expect(r.body.checks.objectStore.status).toBe('up');
    const m = await request(node.metricsUrl, 'GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toContain('http_request_duration_seconds');
  });

  describe('POST /api/admin/migrate/{tenantName}', () => {
    const code = () => node.config.auth.provisioningCode;

    it('refuses a wrong or missing provisioning code', async () => {
      const wrong = await node.http.post(`/api/admin/migrate/newco?code=wrong`);
      expect(wrong.status).toBe(403);
      expect(wrong.body.code).toBe('forbidden');
      const missing = await node.http.post(`/api/admin/migrate/newco`);
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].field).toBe('query.code');
    });

    it('creates and migrates a tenant, idempotently', async () => {
      const first = await node.http.post(`/api/admin/migrate/newco?code=${code()}`, {
        body: { displayName: 'New Co' },
      });
      expect(first.status).toBe(200);
      expect(first.body.applied.length).toBeGreaterThan(0);
      const second = await node.http.post(`/api/admin/migrate/newco?code=${code()}`);
      expect(second.status).toBe(200);
      expect(second.body.applied).toEqual([]);
      expect(second.body.to).toBe(first.body.to);
      const ping = await node.http.get('/api/tenant/ping', { tenant: 'newco' });
      expect(ping.body.displayName).toBe('New Co');
    });

    it('refuses an invalid tenant name naming the field', async () => {
      const r = await node.http.post(`/api/admin/migrate/Bad_Name!?code=${code()}`);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors[0].field).toBe('tenantName');
    });
  });
});
