import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort, tokenFor } from '../../support/auth.js';
import { call, connect } from '../../support/hub-client.js';
import { openPolling, pollingPath, pollUntil, rawExchange, statusOf, upgradeRequest } from '../../support/engine-io.js';
import { TelemetryClient } from '../../../src/vcs/telemetry.client.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';

/**
 * Per-address limits on every transport, shared through Redis by all nodes; forwarded addresses
 * believed only from configured proxies; the realm login limiter keyed by tenant and username;
 * the gRPC ingest limited per credential. Every client here is an outside client on 127.0.0.1.
 */
describe('rate limits against outside clients', () => {
  const open: TestNode[] = [];
  const node = async (env: Record<string, string>) => {
    const n = await startTestNode(env);
    open.push(n);
    return n;
  };
  afterAll(async () => {
    for (const n of open.reverse()) await n.destroy();
  });

  it('RATE_LIMIT_PER_IP counts REST, GraphQL, realm pages and hub handshakes together, across two nodes', async () => {
    const port = await freePort();
    const limits = { RATE_LIMIT_PER_IP: '8', RATE_LIMIT_WINDOW_SECONDS: '120' };
    const a = await node({
      ROLES: 'http,hub,actors,idp',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...limits,
    });
    const b = await node({
      ROLES: 'http,hub,actors',
      REDIS_PREFIX: a.config.redis.prefix,
      MONGODB_CATALOG_DB: a.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: a.config.mongo.tenantDbPrefix,
      ...limits,
    });
    await createUser(a, 'acme', { username: 'alice', role: 'clinician' });
    const graphql = (n: TestNode) =>
      n.http.post('/graphql', { tenant: 'acme', body: { query: '{ basicTenantInfo { name } }' } });
    const served = [
      await a.http.get('/api/tenant/ping', { tenant: 'acme' }),
      await b.http.get('/api/tenant/ping', { tenant: 'acme' }),
      await a.http.get('/realms/acme/.well-known/openid-configuration'),
      await graphql(b),
    ];
    for (const r of served) expect(r.status).toBeLessThan(429);
    for (let i = 0; i < 4; i++) expect((await b.http.get('/api/tenant/ping', { tenant: 'acme' })).status).toBe(200);

    const refused = [
      await a.http.get('/api/tenant/ping', { tenant: 'acme' }),
      await graphql(a),
      await b.http.get('/realms/acme/.well-known/openid-configuration'),
      await a.http.get('/realms/acme/.well-known/openid-configuration'),
    ];
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('rate_limited');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    const hub = await connect(b.url!, 'acme', { token: 'any' }).catch((e) => e);
    expect(hub.data).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
    // Health probes are not counted: an orchestrator keeps seeing the node.
    expect((await a.http.get('/healthz')).status).toBe(200);
  });

  it('a hub handshake counts once against RATE_LIMIT_PER_IP, its count taken as its engine.io session opens', async () => {
    // The handshake's count starts beside its session's (one wait for Redis): it must still count once.
    const n = await node({ ROLES: 'http,hub,actors', RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: '120' });
    await createUser(n, 'acme', { username: 'alice', role: 'clinician' });
    const bob = await createUser(n, 'acme', { username: 'bob', role: 'clinician' });
    const token = await tokenFor(n, 'acme', 'alice');
    for (let i = 0; i < 2; i++) expect((await n.http.get('/api/tenant/ping', { tenant: 'acme' })).status).toBe(200);
    const hub = await connect(n.url!, 'acme', { token });
    try {
      // The third count of the address: the handshake was admitted, and it used its budget.
      expect(await call(hub, 'initCall', { calleeIds: [bob], callType: 'audio' })).toMatchObject({ ok: true });
      const after = await n.http.get('/api/tenant/ping', { tenant: 'acme' });
      expect({ status: after.status, code: after.body.code }).toEqual({ status: 429, code: 'rate_limited' });
    } finally {
      hub.close();
    }
  });

  it('RATE_LIMIT_HUB_SESSIONS_PER_IP limits new engine.io sessions per address before any Socket.IO connect, across two nodes', async () => {
    const limits = { RATE_LIMIT_HUB_SESSIONS_PER_IP: '4', RATE_LIMIT_WINDOW_SECONDS: '120', TRUST_PROXY: 'loopback' };
    const a = await node({ ROLES: 'http,hub,actors', ...limits });
    const b = await node({
      ROLES: 'http,hub,actors',
      REDIS_PREFIX: a.config.redis.prefix,
      MONGODB_CATALOG_DB: a.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: a.config.mongo.tenantDbPrefix,
      ...limits,
    });
    await createUser(a, 'acme', { username: 'alice', role: 'clinician' });
    // Bare engine.io sessions (no Socket.IO connect, no token), two on each node: all opened.
    const sessions = [
      await openPolling(a.url!, 'acme'),
      await openPolling(b.url!, 'acme'),
      await openPolling(a.url!, 'acme'),
      await openPolling(b.url!, 'acme'),
    ];
    // The fifth new session of the address, on either node and either transport, is refused.
    for (const n of [a, b]) {
      const r = await n.http.get(pollingPath(), { tenant: 'acme' });
      expect({ status: r.status, code: r.body.code, type: r.headers['content-type'] }).toEqual({
        status: 429,
        code: 'rate_limited',
        type: expect.stringContaining('application/problem+json'),
      });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    const ws = await rawExchange(Number(new URL(a.url!).port), [upgradeRequest(`acme.localhost`)], {
      until: (got) => got.includes('\r\n\r\n'),
    });
    expect(statusOf(ws.received)).toBe(429);
    expect(ws.received.toString('latin1')).toMatch(/retry-after: [1-9]/i);
    // Requests of the sessions already open are not new sessions: they are still served.
    for (const s of sessions) {
      expect((await s.post('40')).status).toBe(200);
      expect(await pollUntil(s, (p) => p.startsWith('44'))).toContain('unauthenticated');
    }
    // Another client address (through the configured proxy) has its own budget.
    const other = await a.http.get(pollingPath(), { tenant: 'acme', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(other.status).toBe(200);
  });

  it('a rotating X-Forwarded-For escapes no limit unless it comes from a configured proxy; the audit keeps the real address', async () => {
    const limits = { RATE_LIMIT_SIGNIN_PER_IP: '3', RATE_LIMIT_SIGNIN_PER_ACCOUNT: '1000' };
    const attempt = (n: TestNode, i: number) =>
      n.http.post('/api/account/login', {
        tenant: 'acme',
        headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        body: { method: 'pin', username: `nobody${i}`, pin: '0000' },
      });
    // No TRUST_PROXY: the default trusts no proxy.
    const direct = await node(limits);
    await createUser(direct, 'acme', { username: 'alice', role: 'clinician' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt(direct, i)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    const audited = await direct.services.auth.audit.list('acme', { action: 'signin.failure' });
    expect(audited.map((e) => e.ip)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);

    // A proxy is configured, but the client is not it.
    const elsewhere = await node({ ...limits, TRUST_PROXY: '10.20.30.40' });
    await createUser(elsewhere, 'acme', { username: 'alice', role: 'clinician' });
    const viaOther: number[] = [];
    for (let i = 0; i < 4; i++) viaOther.push((await attempt(elsewhere, i)).status);
    expect(viaOther).toEqual([401, 401, 401, 429]);

    // Behind a configured proxy (here on loopback) the forwarded client address is the one counted and audited.
    const proxied = await node({ ...limits, TRUST_PROXY: 'loopback' });
    await createUser(proxied, 'acme', { username: 'alice', role: 'clinician' });
    for (let i = 0; i < 5; i++) expect((await attempt(proxied, i)).status).toBe(401);
    const forwarded = await proxied.services.auth.audit.list('acme', { action: 'signin.failure' });
    expect(forwarded.map((e) => e.ip).sort()).toEqual([
      '203.0.113.1',
      '203.0.113.2',
      '203.0.113.3',
      '203.0.113.4',
      '203.0.113.5',
    ]);
  });

  it('the realm login limiter counts per tenant and username, not per username across tenants', async () => {
    const port = await freePort();
    const realm = await node({
      ROLES: 'http,idp',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_SIGNIN_PER_ACCOUNT: '2',
      RATE_LIMIT_SIGNIN_PER_IP: '1000',
    });
    await createUser(realm, 'acme', { username: 'alice', role: 'clinician', password: 'acme-password' });
    await createUser(realm, 'globex', { username: 'alice', role: 'clinician', password: 'globex-password' });
    const post = (tenant: string) =>
      realm.http.post(`/realms/${tenant}/interaction/not-started/login`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        rawBody: 'username=alice&password=guess',
      });
    expect((await post('acme')).status).toBe(400);
    expect((await post('acme')).status).toBe(400);
    const locked = await post('acme');
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('rate_limited');
    // alice of globex is another account: her attempts have their own budget.
    expect((await post('globex')).status).toBe(400);
  });

  it('limits gRPC telemetry calls per credential with RESOURCE_EXHAUSTED, leaving other tenants alone', async () => {
    const t = await node({ ROLES: 'telemetry', RATE_LIMIT_TELEMETRY_PER_CREDENTIAL: '3' });
    await t.services.tenants.create({ name: 'acme' });
    await t.services.tenants.create({ name: 'other' });
    const address = `127.0.0.1:${(t.roles.get('telemetry') as TelemetryRoleHandle).port}`;
    const acme = new TelemetryClient(address, 'acme', await t.services.telemetry.issueKey('acme'));
    const other = new TelemetryClient(address, 'other', await t.services.telemetry.issueKey('other'));
    const wrong = new TelemetryClient(address, 'acme', 'tk_wrong');
    try {
      // Calls without the key are refused before they are counted: they cannot spend acme's budget.
      for (let i = 0; i < 5; i++)
        await expect(wrong.sendBatch([])).rejects.toMatchObject({ code: 'invalid_credentials' });
      for (let i = 0; i < 3; i++) await expect(acme.sendBatch([])).resolves.toMatchObject({ stored: 0 });
      await expect(acme.sendBatch([])).rejects.toMatchObject({
        status: grpc.status.RESOURCE_EXHAUSTED,
        code: 'rate_limited',
      });
      await expect(acme.stream([])).rejects.toMatchObject({
        status: grpc.status.RESOURCE_EXHAUSTED,
        code: 'rate_limited',
      });
      await expect(other.sendBatch([])).resolves.toMatchObject({ stored: 0 });
    } finally {
      for (const c of [acme, other, wrong]) c.close();
    }
  });
});

describe('the embedded realm follows TRUST_PROXY', () => {
  const open: TestNode[] = [];
  afterAll(async () => {
    for (const n of open.reverse()) await n.destroy();
  });
  const realmNode = async (env: Record<string, string>) => {
    const port = await freePort();
    const n = await startTestNode({
      ROLES: 'http,idp',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...env,
    });
    open.push(n);
    await n.services.tenants.ensure({ name: 'acme' });
    return n;
  };
  const spoofed = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
  // Host is the public one, as a browser would send it; only the forwarded headers are hostile.
  const discovery = (n: TestNode) =>
    n.http.get('/realms/acme/.well-known/openid-configuration', {
      host: new URL(n.config.http.publicUrl).host,
      headers: spoofed,
    });

  it('ignores X-Forwarded-Host/-Proto from a client that is not a configured proxy', async () => {
    for (const env of [{}, { TRUST_PROXY: '10.20.30.40' }] as Record<string, string>[]) {
      const n = await realmNode(env);
      const d = await discovery(n);
      expect(d.status).toBe(200);
      expect(d.text).not.toContain('evil.example');
      expect(d.body.token_endpoint).toBe(`${n.config.http.publicUrl}/realms/acme/token`);
      expect(d.body.authorization_endpoint.startsWith(`${n.config.http.publicUrl}/realms/acme/`)).toBe(true);
    }
  });

  it("does not take them from a configured proxy either: the realm's URLs are its configured issuer's", async () => {
    const n = await realmNode({ TRUST_PROXY: 'loopback' });
    const d = await discovery(n);
    expect(d.status).toBe(200);
    expect(d.text).not.toContain('evil.example');
    expect(d.body.token_endpoint).toBe(`${n.config.http.publicUrl}/realms/acme/token`);
  });

  it("a Host header does not choose the realm's URLs, nor the redirect URI and approval page the service hands out", async () => {
    const n = await realmNode({});
    const port = new URL(n.config.http.publicUrl).port;
    const d = await n.http.get('/realms/acme/.well-known/openid-configuration', { host: 'evil.example:4444' });
    expect(d.status).toBe(200);
    expect(d.text).not.toContain('evil.example');
    expect(d.body.issuer).toBe(`${n.config.http.publicUrl}/realms/acme`);
    expect(d.body.authorization_endpoint).toBe(`${n.config.http.publicUrl}/realms/acme/auth`);
    expect(d.body.jwks_uri.startsWith(`${n.config.http.publicUrl}/realms/acme/`)).toBe(true);
    // A tenant host on another port (the tenant still comes from the host name): the origin handed out is
    // the configured one, {tenant}.BASE_DOMAIN with PUBLIC_URL's scheme and port.
    const host = 'acme.localhost:4444';
    const org = await n.http.post('/api/account/org', { host });
    expect(org.status).toBe(200);
    expect(org.body.realm.redirectUri).toBe(`http://acme.localhost:${port}/auth/callback`);
    expect(org.body.realm.issuer).toBe(`${n.config.http.publicUrl}/realms/acme`);
    const qr = await n.http.get('/api/account/qrCode?deviceName=tablet', { host });
    expect(qr.status).toBe(201);
    expect(qr.body.approveUrl).toBe(`http://acme.localhost:${port}/login/approve?code=${qr.body.code}`);
  });
});
