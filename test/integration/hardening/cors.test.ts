import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';

/** Cross-origin access: none by default; per deployment (CORS_ORIGINS) and per tenant (TenantConfig). */
describe('CORS', () => {
  let node: TestNode;
  const deployment = 'https://console.hospital.example';
  const acmeApp = 'https://app.acme.example';

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors', CORS_ORIGINS: `${deployment}/` });
    await node.services.tenants.create({ name: 'acme', displayName: 'Acme Hospital' });
    await node.services.tenants.create({ name: 'globex', displayName: 'Globex Clinic' });
    await node.infra.mongo
      .tenantDb('acme')
      .models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'cors.allowedOrigins': [acmeApp] } });
  });
  afterAll(async () => node?.destroy());

  const options = (tenant: string, origin: string, path = '/api/tenant/ping') =>
    request(node.url!, 'OPTIONS', path, {
      tenant,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

  it('allows no origin by default', async () => {
    const r = await node.http.get('/api/tenant/ping', {
      tenant: 'globex',
      headers: { origin: 'https://evil.example' },
    });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await options('globex', 'https://evil.example');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('allows the deployment origins on every tenant host, echoing the origin (never *)', async () => {
    for (const tenant of ['acme', 'globex']) {
      const r = await node.http.get('/api/tenant/ping', { tenant, headers: { origin: deployment } });
      expect(r.headers['access-control-allow-origin']).toBe(deployment);
      expect(r.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it("allows a tenant's own origins on that tenant's host only", async () => {
    const own = await node.http.get('/api/tenant/ping', { tenant: 'acme', headers: { origin: acmeApp } });
    expect(own.headers['access-control-allow-origin']).toBe(acmeApp);
    const other = await node.http.get('/api/tenant/ping', { tenant: 'globex', headers: { origin: acmeApp } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers an allowed preflight with the methods and headers', async () => {
    const pre = await options('acme', acmeApp, '/graphql');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(acmeApp);
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(pre.headers['access-control-max-age']).toBe('600');
  });

  it("applies the same policy to the hub's long-polling transport", async () => {
    const path = '/hubs/mobile/?EIO=4&transport=polling';
    const evil = await request(node.url!, 'GET', path, { tenant: 'acme', headers: { origin: 'https://evil.example' } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const own = await request(node.url!, 'GET', path, { tenant: 'acme', headers: { origin: acmeApp } });
    expect(own.headers['access-control-allow-origin']).toBe(acmeApp);
  });
});
