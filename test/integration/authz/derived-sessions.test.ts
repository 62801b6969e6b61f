import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor, tokenFor } from '../../support/auth.js';

/**
 * A session never mints a session with more than it holds, and a derived session dies with its parent:
 * QR approval, impersonation and offline tokens, driven over HTTP as a client would.
 */
describe('derived sessions: scope and lifetime follow the parent', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode();
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    await createUser(node, 'acme', { username: 'sam', role: 'support' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
  });
  afterAll(async () => node.destroy());

  const qrApprovedBy = async (approverToken: string) => {
    const c = (await node.http.get('/api/account/qrCode?deviceName=tablet', { tenant: 'acme' })).body as {
      code: string;
      pollSecret: string;
    };
    const approved = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token: approverToken,
      body: { code: c.code },
    });
    return {
      approved,
      redeem: () =>
        node.http.post('/api/account/login', {
          tenant: 'acme',
          body: { method: 'qr', code: c.code, pollSecret: c.pollSecret },
        }),
    };
  };
  const ping = async (token: string) => (await node.http.get('/api/tenant/ping', { tenant: 'acme', token })).body.code;

  it('a read-only offline session approving a QR code yields a session no wider than itself, which dies with the offline token', async () => {
    const alice = await tokenFor(node, 'acme', 'alice');
    const issued = await node.http.post('/api/account/offlineToken?purpose=rounds', { tenant: 'acme', token: alice });
    expect(issued.status).toBe(201);
    const offline = await node.http.post('/api/account/offlineLogin', {
      tenant: 'acme',
      body: { token: issued.body.token },
    });
    expect(offline.status).toBe(200);
    const offlinePerms: string[] = offline.body.permissions;

    const { approved, redeem } = await qrApprovedBy(offline.body.accessToken);
    expect(approved.status).toBe(200);
    const derived = await redeem();
    expect(derived.status).toBe(200);
    expect(derived.body.permissions.length).toBeGreaterThan(0);
    expect(derived.body.permissions.filter((p: string) => !offlinePerms.includes(p))).toEqual([]);

    const create = await node.http.post('/api/events/create', {
      tenant: 'acme',
      token: derived.body.accessToken,
      body: { name: 'x', startDate: new Date().toISOString() },
    });
    expect(create.status).toBe(403);
    const fresh = await node.http.post('/api/account/offlineToken?purpose=again', {
      tenant: 'acme',
      token: derived.body.accessToken,
    });
    expect(fresh.status).toBe(403);

    const refreshed = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: derived.body.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.accessToken).toEqual(expect.any(String));

    const revoke = await node.http.post('/api/account/revokeOfflineToken', {
      tenant: 'acme',
      token: alice,
      body: { id: issued.body.id },
    });
    expect(revoke.status).toBe(200);
    expect(await ping(derived.body.accessToken)).toBe('session_revoked');
    expect(await ping(refreshed.body.accessToken)).toBe('session_revoked');
    const afterRefresh = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: refreshed.body.refreshToken },
    });
    expect(afterRefresh.status).toBe(401);
  });

  it('a QR session approved from a web session dies when that web session logs out', async () => {
    const web = await loginFor(node, 'acme', 'alice');
    const { approved, redeem } = await qrApprovedBy(web.accessToken);
    expect(approved.status).toBe(200);
    const derived = await redeem();
    expect(derived.status).toBe(200);
    expect(await ping(derived.body.accessToken)).toBeUndefined();
    const token = await node.http.post('/api/account/offlineToken?purpose=tablet', {
      tenant: 'acme',
      token: derived.body.accessToken,
    });
    expect(token.status).toBe(201);
    const out = await node.http.post(`/api/account/${web.user.id}/logout`, { tenant: 'acme', token: web.accessToken });
    expect(out.status).toBe(200);
    expect(await ping(derived.body.accessToken)).toBe('session_revoked');
    const offline = await node.http.post('/api/account/offlineLogin', {
      tenant: 'acme',
      body: { token: token.body.token },
    });
    expect(offline.status).toBe(401);
  });

  it('a QR code approved by a session that is revoked before the poll is not redeemed', async () => {
    const web = await loginFor(node, 'acme', 'alice');
    const { approved, redeem } = await qrApprovedBy(web.accessToken);
    expect(approved.status).toBe(200);
    await node.http.post(`/api/account/${web.user.id}/logout`, { tenant: 'acme', token: web.accessToken });
    const late = await redeem();
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('session_revoked');
  });

  it('an impersonation session dies with the support session that started it', async () => {
    const sam = await loginFor(node, 'acme', 'sam');
    const imp = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: sam.accessToken,
      body: { username: 'pat' },
    });
    expect(imp.status).toBe(200);
    expect(await ping(imp.body.accessToken)).toBeUndefined();
    await node.http.post(`/api/account/${sam.user.id}/logout`, { tenant: 'acme', token: sam.accessToken });
    expect(await ping(imp.body.accessToken)).toBe('session_revoked');
  });
});
