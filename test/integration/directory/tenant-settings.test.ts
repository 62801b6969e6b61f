import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart } from '../../support/form.js';
import { TenantSettingsService } from '../../../src/core/tenants/tenant-settings.service.js';
import { TenantConfigRepository } from '../../../src/data/repositories/tenant-config.repository.js';

/** Tenant administrators change TenantConfig and the security rules (decision 950). */
describe('PATCH /api/admin/tenantConfig and /api/admin/securityRules', () => {
  let node: TestNode;
  const run = `ts${Date.now().toString(36)}`;
  const acme = `${run}a`;
  const globex = `${run}g`;
  let admin: string;
  let clinician: string;
  let otherAdmin: string;
  const app = 'https://app.acme-clinic.example';

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    await createUser(node, acme, { username: 'ada', role: 'admin' });
    await createUser(node, acme, { username: 'cleo', role: 'clinician' });
    await createUser(node, globex, { username: 'gus', role: 'admin' });
    admin = await tokenFor(node, acme, 'ada');
    clinician = await tokenFor(node, acme, 'cleo');
    otherAdmin = await tokenFor(node, globex, 'gus');
  });
  afterAll(async () => node?.destroy());

  const patch = (path: string, body: unknown, token = admin, tenant = acme) =>
    node.http.patch(`/api/admin/${path}`, { tenant, token, body });
  const gql = (query: string, token = admin, tenant = acme) =>
    node.http.post('/graphql', { tenant, token, body: { query } });
  const preflight = (origin: string) =>
    request(node.url!, 'OPTIONS', '/graphql', {
      tenant: acme,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });

  it('allows a browser origin once an admin adds it, and no other origin', async () => {
    expect((await preflight(app)).headers['access-control-allow-origin']).toBeUndefined();
    const r = await patch('tenantConfig', { cors: { allowedOrigins: [app, 'http://localhost:5173'] } });
    expect(r.status).toBe(200);
    expect(r.body.cors.allowedOrigins).toEqual([app, 'http://localhost:5173']);
    expect(r.body).toMatchObject({ tenant: acme, uploads: { maxBytes: 100 * 1024 * 1024 } });
    const pre = await preflight(app);
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(app);
    expect((await preflight('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses an upload over the limit an admin set', async () => {
    const small = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(3000, 0x41)]);
    const upload = () => {
      const { body, headers } = multipart([{ name: 'file', file: { fileName: 'scan.pdf', content: small } }]);
      return node.http.post('/api/media/upload', { tenant: acme, token: clinician, rawBody: body, headers });
    };
    expect((await upload()).status).toBe(201);
    const r = await patch('tenantConfig', { uploads: { maxBytes: 2048 } });
    expect(r.body.uploads).toMatchObject({ maxBytes: 2048, allowedExtensions: expect.arrayContaining(['pdf']) });
    const over = await upload();
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('payload_too_large');
  });

  it('shows a waiting-room default change in tenantConfig, keeping the fields it did not name', async () => {
    const r = await patch('tenantConfig', { meetings: { waitingRoom: true, waitingRoomExpirySeconds: 600 } });
    expect(r.body.meetings).toMatchObject({ waitingRoom: true, waitingRoomExpirySeconds: 600, ringTimeoutSeconds: 45 });
    const q = await gql('{ tenantConfig { meetings { waitingRoom waitingRoomExpirySeconds } uploads { maxBytes } } }');
    expect(q.body.data.tenantConfig).toEqual({
      meetings: { waitingRoom: true, waitingRoomExpirySeconds: 600 },
      uploads: { maxBytes: 2048 },
    });
    // The earlier change of another field is still there: only the given paths were written.
    expect(r.body.cors.allowedOrigins).toContain(app);
  });

  it('shows a security rules change in tenantSecurityRules', async () => {
    const r = await patch('securityRules', { pin: { minLength: 6 }, lockout: { maxAttempts: 3 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ pin: { minLength: 6, maxLength: 8 }, lockout: { maxAttempts: 3 } });
    const q = await gql(
      '{ tenantSecurityRules { pin { minLength maxLength } lockout { maxAttempts lockoutSeconds } } }',
    );
    expect(q.body.data.tenantSecurityRules).toEqual({
      pin: { minLength: 6, maxLength: 8 },
      lockout: { maxAttempts: 3, lockoutSeconds: 300 },
    });
  });

  it('refuses a clinician with 403 permission_denied and changes nothing', async () => {
    for (const [path, body] of [
      ['tenantConfig', { directory: { patientScope: 'tenant' } }],
      ['securityRules', { loginCodeTtlSeconds: 60 }],
    ] as const) {
      const r = await patch(path, body, clinician);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    }
    const q = await gql('{ tenantSecurityRules { loginCodeTtlSeconds } }');
    expect(q.body.data.tenantSecurityRules.loginCodeTtlSeconds).toBe(120);
  });

  it('answers bad input with a 400 problem naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['tenantConfig', { uploads: { maxBytes: 10 } }, 'uploads.maxBytes'],
      ['tenantConfig', { uploads: { allowedExtensions: ['PDF'] } }, 'uploads.allowedExtensions.0'],
      ['tenantConfig', { cors: { allowedOrigins: ['https://*.example.com'] } }, 'cors.allowedOrigins.0'],
      ['tenantConfig', { cors: { allowedOrigins: ['http://app.example.com'] } }, 'cors.allowedOrigins.0'],
      ['tenantConfig', { cors: { allowedOrigins: ['https://app.example.com/'] } }, 'cors.allowedOrigins.0'],
      ['tenantConfig', { webApp: { loginApproveUrl: 'http://app.example.com/approve' } }, 'webApp.loginApproveUrl'],
      ['tenantConfig', { uploads: { maxbytes: 5000 } }, 'uploads.maxbytes'],
      ['tenantConfig', { tenant: 'other' }, 'tenant'],
      ['securityRules', { pin: { minLength: 9 } }, 'pin.minLength'],
      ['securityRules', { pin: { minLength: 2 } }, 'pin.minLength'],
      ['securityRules', { session: { accessTokenTtlSeconds: 'soon' } }, 'session.accessTokenTtlSeconds'],
    ];
    for (const [path, body, field] of cases) {
      const r = await patch(path, body);
      expect({ body, status: r.status, code: r.body.code }).toEqual({ body, status: 400, code: 'validation_failed' });
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await gql('{ tenantConfig { uploads { maxBytes } } }')).body.data.tenantConfig.uploads.maxBytes).toBe(2048);
  });

  it('records each change in the audit trail with old and new values, attributed to the admin', async () => {
    const r = await node.http.get('/api/admin/audit?action=tenant.configure', { tenant: acme, token: admin });
    expect(r.status).toBe(200);
    const uploads = r.body.items.find((e: { details: { paths: string[] } }) =>
      e.details.paths.includes('uploads.maxBytes'),
    );
    expect(uploads).toMatchObject({
      action: 'tenant.configure',
      details: { changes: [{ path: 'uploads.maxBytes', old: 100 * 1024 * 1024, new: 2048 }] },
    });
    const ada = (await gql('{ me { id } }')).body.data.me.id;
    expect(uploads.actorId).toBe(ada);
    const sec = await node.http.get('/api/admin/audit?action=security.rules.change', { tenant: acme, token: admin });
    expect(sec.body.items[0].details.changes).toEqual(
      expect.arrayContaining([
        { path: 'security.pin.minLength', old: 4, new: 6 },
        { path: 'security.lockout.maxAttempts', old: 5, new: 3 },
      ]),
    );
  });

  it("leaves another tenant's configuration untouched", async () => {
    const q = await gql(
      '{ tenantConfig { uploads { maxBytes } meetings { waitingRoom } } tenantSecurityRules { pin { minLength } } }',
      otherAdmin,
      globex,
    );
    expect(q.body.data).toEqual({
      tenantConfig: { uploads: { maxBytes: 100 * 1024 * 1024 }, meetings: { waitingRoom: false } },
      tenantSecurityRules: { pin: { minLength: 4 } },
    });
    const pre = await request(node.url!, 'OPTIONS', '/graphql', {
      tenant: globex,
      headers: { origin: app, 'access-control-request-method': 'POST' },
    });
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const audit = await node.http.get('/api/admin/audit?action=tenant.configure', {
      tenant: globex,
      token: otherAdmin,
    });
    expect(audit.body.items).toEqual([]);
  });

  // With a clock that does not move, every write carries the same timestamp (two writes in one millisecond,
  // or nodes whose clocks agree to the millisecond): a compare-and-set on the time of the last write cannot
  // tell the winner's write from none, only a revision that every write changes can.
  it.each([
    ['with the clock running', false],
    ['with every write in the same millisecond', true],
  ])('never stores a pair that breaks a bound when two admins change its two ends at once (%s)', async (_, frozen) => {
    // Only Date stands still; timers and I/O run as usual.
    if (frozen)
      jest.useFakeTimers({
        now: Date.now(),
        doNotFake: [
          'hrtime',
          'nextTick',
          'performance',
          'queueMicrotask',
          'setImmediate',
          'clearImmediate',
          'setInterval',
          'clearInterval',
          'setTimeout',
          'clearTimeout',
        ],
      });
    try {
      await raceBothEnds();
    } finally {
      jest.useRealTimers();
    }
  });

  async function raceBothEnds() {
    // Both changes read the rules before either writes (the reads meet at a barrier): each is valid
    // alone (min 8 <= max 8; min 6 <= max 7), together they would store min 8 > max 7.
    const reset = await patch('securityRules', { pin: { minLength: 6, maxLength: 8 } });
    expect(reset.status).toBe(200);
    let reads = 0;
    let release!: () => void;
    const bothRead = new Promise<void>((r) => (release = r));
    const svc = new TenantSettingsService({
      settings: (t) => {
        const repo = new TenantConfigRepository(node.infra.mongo.tenantDb(t));
        return {
          settings: async () => {
            const s = await repo.settings();
            if (++reads === 2) release();
            if (reads <= 2) await bothRead;
            return s;
          },
          setPaths: (set, since) => repo.setPaths(set, since),
        };
      },
      admin: node.services.admin,
      rules: node.services.auth.rules,
      caches: [node.services.auth.rules],
    });
    const p = await node.services.auth.verifyAccessToken(acme, admin);
    const outcomes = await Promise.allSettled([
      svc.changeSecurityRules(p, acme, { pin: { minLength: 8 } }),
      svc.changeSecurityRules(p, acme, { pin: { maxLength: 7 } }),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      code: 'validation_failed',
    });
    const stored = (await new TenantConfigRepository(node.infra.mongo.tenantDb(acme)).settings())?.security?.pin;
    expect(stored?.minLength).toBeDefined();
    expect(stored!.minLength).toBeLessThanOrEqual(stored!.maxLength);
    await patch('securityRules', { pin: { minLength: 6, maxLength: 8 } });
  }
});
