import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';

describe('offline tokens and impersonation', () => {
  let node: TestNode;
  let aliceId: string;
  let samId: string;
  let adaId: string;

  beforeAll(async () => {
    node = await startTestNode();
    aliceId = await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    samId = await createUser(node, 'acme', { username: 'sam', role: 'support' });
    adaId = await createUser(node, 'acme', { username: 'ada', role: 'admin' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    await createUser(node, 'globex', { username: 'gina', role: 'clinician' });
  });
  afterAll(async () => node.destroy());

  it('issues a purpose-scoped offline token, logs in with it, and revokes it with its sessions', async () => {
    const alice = await tokenFor(node, 'acme', 'alice');
    const noPurpose = await node.http.post('/api/account/offlineToken', { tenant: 'acme', token: alice });
    expect(noPurpose.status).toBe(400);
    expect(noPurpose.body.errors[0].field).toBe('query.purpose');
    const issued = await node.http.post('/api/account/offlineToken?purpose=ward-rounds', {
      tenant: 'acme',
      token: alice,
    });
    expect(issued.status).toBe(201);
    expect(issued.body.purpose).toBe('ward-rounds');
    expect(issued.body.permissions).not.toContain('events:write');
    const { db } = await node.services.tenants.require('acme');
    const stored = await db.models.OfflineToken.findById(issued.body.id).lean();
    expect(stored!.tokenHash).not.toBe(issued.body.token);
    const login = await node.http.post('/api/account/offlineLogin', {
      tenant: 'acme',
      body: { token: issued.body.token },
    });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ purpose: 'ward-rounds', user: { id: aliceId } });
    expect(login.body.permissions).toEqual(issued.body.permissions);
    expect(decodeJwt(login.body.accessToken)).toMatchObject({ purpose: 'ward-rounds' });
    expect(
      (await node.services.auth.audit.list('acme', { action: 'signin.success', subjectId: aliceId }))
        .map((a) => a.details)
        .filter((d) => d?.method === 'offline'),
    ).toEqual([{ method: 'offline', purpose: 'ward-rounds' }]);
    const fromOffline = await node.http.post('/api/account/offlineToken?purpose=again', {
      tenant: 'acme',
      token: login.body.accessToken,
    });
    expect(fromOffline.status).toBe(403);
    const wrongTenant = await node.http.post('/api/account/offlineLogin', {
      tenant: 'globex',
      body: { token: issued.body.token },
    });
    expect(wrongTenant.status).toBe(401);
    const revoke = await node.http.post('/api/account/revokeOfflineToken', {
      tenant: 'acme',
      token: alice,
      body: { id: issued.body.id },
    });
    expect(revoke.status).toBe(200);
    expect(revoke.body.sessionsRevoked).toBe(1);
    expect((await node.http.get('/api/tenant/ping', { tenant: 'acme', token: login.body.accessToken })).body.code).toBe(
      'session_revoked',
    );
    const after = await node.http.post('/api/account/offlineLogin', {
      tenant: 'acme',
      body: { token: issued.body.token },
    });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_credentials');
    const again = await node.http.post('/api/account/revokeOfflineToken', {
      tenant: 'acme',
      token: alice,
      body: { id: issued.body.id },
    });
    expect(again.status).toBe(404);
  });

  it('lets support impersonate with an act claim, capped permissions and an audit trail', async () => {
    const sam = await tokenFor(node, 'acme', 'sam');
    const r = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: sam,
      body: { username: 'alice' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user: { id: aliceId }, impersonatedBy: samId });
    const claims = decodeJwt(r.body.accessToken);
    expect(claims).toMatchObject({ sub: aliceId, act: { sub: samId } });
    expect(r.body.permissions).not.toContain('events:write');
    expect(r.body.permissions).toContain('events:read');
    const me = await node.services.auth.account.me(
      await node.services.auth.verifyAccessToken('acme', r.body.accessToken),
    );
    expect(me).toMatchObject({ user: { username: 'alice' }, impersonatedBy: samId });
    const chained = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: r.body.accessToken,
      body: { username: 'pat' },
    });
    expect(chained.status).toBe(403);
    const end = await node.http.post(`/api/account/${aliceId}/logout`, { tenant: 'acme', token: r.body.accessToken });
    expect(end.status).toBe(200);
    const actions = (await node.services.auth.audit.list('acme', {})).map((a) => `${a.action}:${a.outcome}`);
    expect(actions).toEqual(expect.arrayContaining(['impersonation.start:success', 'impersonation.end:success']));
  });

  it('refuses impersonation without the permission, of admins, of oneself and across tenants', async () => {
    const pat = await tokenFor(node, 'acme', 'pat');
    expect(
      (await node.http.post('/api/account/impersonate', { tenant: 'acme', token: pat, body: { username: 'alice' } }))
        .status,
    ).toBe(403);
    const sam = await tokenFor(node, 'acme', 'sam');
    const admin = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: sam,
      body: { userId: adaId },
    });
    expect(admin.status).toBe(403);
    expect(
      (await node.http.post('/api/account/impersonate', { tenant: 'acme', token: sam, body: { userId: samId } }))
        .status,
    ).toBe(400);
    const { db } = await node.services.tenants.require('globex');
    const gina = await db.models.User.findOne({ username: 'gina' }).lean();
    const foreign = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: sam,
      body: { userId: String(gina!._id) },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('user_not_found');
    expect(
      (await node.services.auth.audit.list('acme', { action: 'impersonation.start' })).some(
        (a) => a.outcome === 'failure',
      ),
    ).toBe(true);
  });

  it('answers org, me, hasPin and security rules; admins assign roles without escalation', async () => {
    const org = await node.http.post('/api/account/org', { tenant: 'acme' });
    expect(org.status).toBe(200);
    expect(org.body.realm.issuer).toBe(node.services.auth.realms.issuerFor('acme'));
    expect(org.body.realm.redirectUri).toMatch(/^http:\/\/acme\.localhost:\d+\/auth\/callback$/);
    const ada = await tokenFor(node, 'acme', 'ada');
    const assigned = await node.http.post('/api/account/assignRole', {
      tenant: 'acme',
      token: ada,
      body: { userId: aliceId, role: 'support' },
    });
    expect(assigned.status).toBe(200);
    const unknown = await node.http.post('/api/account/assignRole', {
      tenant: 'acme',
      token: ada,
      body: { userId: aliceId, role: 'wizard' },
    });
    expect(unknown.status).toBe(400);
    const me = await node.services.auth.account.me(
      await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', 'alice')),
    );
    expect(me.user.role).toBe('support');
    expect(me.permissions).toContain('account:impersonate');
    const rules = await node.services.auth.account.securityRules('acme');
    expect(rules.pin).toMatchObject({ minLength: expect.any(Number), digitsOnly: expect.any(Boolean) });
  });
});
