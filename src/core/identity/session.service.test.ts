import { beforeEach, describe, expect, it } from '@jest/globals';
import { BUILTIN_ROLES } from '../../kernel/permissions.js';
import { OFFLINE_PERMISSIONS } from '../../auth/authorizer.js';
import type { AccountRecord } from '../../data/repositories/credential.repository.js';
import type { SessionMethod } from '../../data/repositories/session.repository.js';
import { fakeAuthServices, type FakeAuthServices } from '../../../test/support/fakes/auth.fake-services.js';

/**
 * The session rules on in-memory fakes (docs/architecture.md "Testing a rule without servers"): what a
 * session may do after each refresh, refresh-token rotation and reuse, the per-user cap, lineage.
 */
const T = 'clinic';
let auth: FakeAuthServices;

async function account(username: string, role: string): Promise<AccountRecord> {
  const id = await auth.repos.credentials(T).create({ username, displayName: username, role });
  return (await auth.repos.credentials(T).findById(id))!;
}

/** The permissions the access token carries, as every transport reads them (verified, not decoded). */
async function permsOf(accessToken: string): Promise<string[]> {
  return (await auth.tokens.verify(accessToken)).perms;
}

const roleOf = (role: string) => [...BUILTIN_ROLES[role]!.permissions].sort();

beforeEach(() => {
  auth = fakeAuthServices();
  auth.mongo.provision(T);
});

describe('a refreshed session keeps what its role grants (issue 35 §1)', () => {
  it.each<[SessionMethod, string]>([
    ['oidc', 'clinician'],
    ['pin', 'patient'],
    ['device', 'device'],
  ])('a %s sign-in of a %s: every refresh carries the role permissions, as the sign-in did', async (method, role) => {
    const user = await account(`u-${method}`, role);
    const signedIn = await auth.sessions.issueSignedIn({ tenant: T, user, method });
    expect(await permsOf(signedIn.accessToken)).toEqual(roleOf(role));
    let refreshToken = signedIn.refreshToken;
    for (let i = 0; i < 3; i++) {
      const next = await auth.sessions.refresh(T, refreshToken);
      expect(await permsOf(next.accessToken)).toEqual(roleOf(role));
      refreshToken = next.refreshToken;
    }
  });

  it('a session derived from another (QR approval) keeps its cap after a refresh, no more and no less', async () => {
    const user = await account('nurse', 'clinician');
    const parent = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    const cap = ['profile:read', 'contacts:read', 'events:read'];
    const child = await auth.sessions.start({
      tenant: T,
      user,
      method: 'qr',
      parent: { sessionId: parent.sessionId, permissions: cap },
    });
    expect(await permsOf(child.accessToken)).toEqual([...cap].sort());
    const refreshed = await auth.sessions.refresh(T, child.refreshToken);
    expect(await permsOf(refreshed.accessToken)).toEqual([...cap].sort());
  });

  it('an impersonation is capped by the impersonator and stays capped after a refresh', async () => {
    const target = await account('pat', 'patient');
    const actor = await account('helpdesk', 'support');
    const s = await auth.sessions.start({ tenant: T, user: target, actor, method: 'impersonation' });
    const both = roleOf('patient').filter((p) => roleOf('support').includes(p));
    expect(await permsOf(s.accessToken)).toEqual(both);
    expect(await permsOf((await auth.sessions.refresh(T, s.refreshToken)).accessToken)).toEqual(both);
  });

  it('an offline-token session keeps the token scope within the offline permissions after a refresh', async () => {
    const user = await account('ward-tablet', 'clinician');
    const tokenId = await auth.repos.offlineTokens(T).create({
      tokenHash: 'h-offline',
      userId: user._id.toString(),
      purpose: 'ward round',
      permissions: ['contacts:read', 'events:read', 'events:write'],
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const s = await auth.sessions.start({ tenant: T, user, method: 'offline', offlineTokenId: tokenId });
    const expected = ['contacts:read', 'events:read'].filter((p) => OFFLINE_PERMISSIONS.includes(p as never));
    expect(await permsOf(s.accessToken)).toEqual(expected);
    expect(await permsOf((await auth.sessions.refresh(T, s.refreshToken)).accessToken)).toEqual(expected);
  });

  it('a refresh after a role change carries the new role permissions', async () => {
    const user = await account('promoted', 'patient');
    const s = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await auth.repos.credentials(T).setRole(user._id.toString(), 'clinician');
    expect(await permsOf((await auth.sessions.refresh(T, s.refreshToken)).accessToken)).toEqual(roleOf('clinician'));
  });
});

describe('refresh tokens are single use (decision 1103)', () => {
  it('the superseded token presented after the grace revokes the session and audits the reuse', async () => {
    auth = fakeAuthServices({ refreshReuseGraceSeconds: 0 });
    auth.mongo.provision(T);
    const user = await account('reuse', 'patient');
    const s = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    const next = await auth.sessions.refresh(T, s.refreshToken);
    await expect(auth.sessions.refresh(T, s.refreshToken)).rejects.toMatchObject({ code: 'session_revoked' });
    await expect(auth.sessions.refresh(T, next.refreshToken)).rejects.toMatchObject({ code: 'session_revoked' });
    expect((await auth.sessions.find(T, s.sessionId))?.revokeReason).toBe('refresh_token_reuse');
    expect(await auth.revocations.isRevoked(T, s.sessionId)).toBe(true);
    expect(await auth.audit.list(T, { action: 'session.reuse_detected' })).toHaveLength(1);
  });

  it('the superseded token presented again within the grace rotates once more (a lost answer), audited', async () => {
    const user = await account('retry', 'patient');
    const s = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await auth.sessions.refresh(T, s.refreshToken);
    const again = await auth.sessions.refresh(T, s.refreshToken);
    expect(await permsOf(again.accessToken)).toEqual(roleOf('patient'));
    expect(await auth.audit.list(T, { action: 'session.refresh_retried' })).toHaveLength(1);
  });

  it('a malformed token, and a token of another tenant, are invalid credentials', async () => {
    auth.mongo.provision('other');
    const user = await account('mine', 'patient');
    const s = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await expect(auth.sessions.refresh(T, 'rt_nope')).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(auth.sessions.refresh('other', s.refreshToken)).rejects.toMatchObject({ code: 'invalid_credentials' });
  });

  it('a disabled account cannot refresh: its session is revoked', async () => {
    const user = await account('leaver', 'clinician');
    const s = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    const users = auth.mongo.tenantDb(T).collection('User');
    users.update(users.byId(user._id)!, (d) => void (d.status = 'disabled'));
    await expect(auth.sessions.refresh(T, s.refreshToken)).rejects.toMatchObject({ code: 'session_revoked' });
    expect((await auth.sessions.find(T, s.sessionId))?.revokeReason).toBe('account_inactive');
  });
});

describe('session lineage and the per-user cap', () => {
  it('keeps at most maxSessionsPerUser live sessions, revoking the oldest', async () => {
    const settings = auth.repos.settings(T);
    await settings.setPaths({ 'security.session.maxSessionsPerUser': 2 });
    const user = await account('busy', 'patient');
    const first = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    expect((await auth.sessions.find(T, first.sessionId))?.revokeReason).toBe('session_limit');
    expect(await auth.repos.sessions(T).liveIdsForUser(user._id.toString(), new Date())).toHaveLength(2);
  });

  it('revoking a parent ends the session it minted: the child can no longer refresh', async () => {
    const user = await account('parent', 'clinician');
    const parent = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    const child = await auth.sessions.start({
      tenant: T,
      user,
      method: 'qr',
      parent: { sessionId: parent.sessionId, permissions: roleOf('clinician') },
    });
    const revoked = await auth.sessions.revoke(T, { ids: [parent.sessionId] }, 'logout');
    expect(revoked.map((r) => r._id).sort()).toEqual([parent.sessionId, child.sessionId].sort());
    await expect(auth.sessions.refresh(T, child.refreshToken)).rejects.toMatchObject({ code: 'session_revoked' });
  });

  it('refuses to derive a session from one that has ended', async () => {
    const user = await account('late', 'clinician');
    const parent = await auth.sessions.issueSignedIn({ tenant: T, user, method: 'oidc' });
    await auth.sessions.revoke(T, { ids: [parent.sessionId] }, 'logout');
    await expect(
      auth.sessions.start({ tenant: T, user, method: 'qr', parent: { sessionId: parent.sessionId, permissions: [] } }),
    ).rejects.toMatchObject({ code: 'session_revoked' });
  });
});
