import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, createLocalJWKSet, jwtVerify, decodeJwt } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor, loginFor } from '../../support/auth.js';
import type { RevocationEvent as RevocationMessage } from '../../../src/auth/revocations.js';

describe('internal tokens, sessions and the policy selector', () => {
  let node: TestNode;
  let aliceId: string;

  beforeAll(async () => {
    node = await startTestNode();
    aliceId = await createUser(node, 'acme', { username: 'alice', role: 'clinician', displayName: 'Alice' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    await createUser(node, 'globex', { username: 'gina', role: 'admin' });
  });
  afterAll(async () => node.destroy());

  const ping = (token: string, tenant = 'acme') => node.http.get('/api/tenant/ping', { tenant, token });
  const problem = (r: { status: number; body: { code: string }; headers: Record<string, unknown> }) => ({
    status: r.status,
    code: r.body.code,
    type: String(r.headers['content-type']).split(';')[0],
  });

  it('issues an ES256 token with the documented claims, verifiable against the public JWKS', async () => {
    const token = await tokenFor(node, 'acme', 'alice');
    const jwks = await node.http.get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.body), {
      issuer: node.config.auth.tokenIssuer,
      audience: node.config.auth.oidc.audience,
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(protectedHeader.kid).toBeTruthy();
    expect(payload).toMatchObject({
      sub: aliceId,
      tenant: 'acme',
      role: 'clinician',
      preferred_username: 'alice',
      name: 'Alice',
    });
    // A person's token names no kind; a device account's says `device` (decision 1153).
    expect(payload.kind).toBeUndefined();
    await createUser(node, 'acme', {
      username: 'hs-tokens',
      role: 'device',
      kind: 'device',
      displayName: 'Ward headset',
    });
    expect(decodeJwt(await tokenFor(node, 'acme', 'hs-tokens'))).toMatchObject({
      name: 'Ward headset',
      kind: 'device',
    });
    expect(payload.perms).toEqual(expect.arrayContaining(['events:write', 'meetings:host']));
    expect(typeof payload.sid).toBe('string');
    expect((await ping(token)).status).toBe(200);
  });

  it('refuses expired, wrong-audience, alg none, tampered and foreign-issuer tokens with 401 problems', async () => {
    const { kid, key } = await node.services.auth.signingKeys.current();
    const good = await tokenFor(node, 'acme', 'alice');
    const claims = decodeJwt(good);
    const sign = (
      p: Record<string, unknown>,
      aud = node.config.auth.oidc.audience,
      exp = Math.floor(Date.now() / 1000) + 60,
    ) =>
      new SignJWT(p)
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(node.config.auth.tokenIssuer)
        .setAudience(aud)
        .setExpirationTime(exp)
        .sign(key);
    const expired = await sign({ ...claims, exp: undefined }, undefined, Math.floor(Date.now() / 1000) - 120);
    const wrongAud = await sign({ ...claims, aud: undefined, exp: undefined }, 'someone-else');
    const [h, , s] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${good.split('.')[1]}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, perms: ['tenant:admin'] })).toString('base64url')}.${s}`;
    const foreign = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('https://evil.example/realms/acme')
      .setSubject('x')
      .setAudience('consult-api')
      .setExpirationTime('1m')
      .sign(new TextEncoder().encode('k'.repeat(32)));
    expect(problem(await ping(expired))).toEqual({
      status: 401,
      code: 'token_expired',
      type: 'application/problem+json',
    });
    expect(problem(await ping(wrongAud))).toMatchObject({ status: 401, code: 'token_invalid' });
    expect(problem(await ping(none))).toMatchObject({ status: 401, code: 'token_invalid' });
    expect(problem(await ping(tampered))).toMatchObject({ status: 401, code: 'token_invalid' });
    expect(problem(await ping(foreign))).toMatchObject({ status: 401, code: 'token_invalid' });
    expect(problem(await ping('not-a-jwt'))).toMatchObject({ status: 401, code: 'token_invalid' });
    const basic = await node.http.get('/api/tenant/ping', { tenant: 'acme', headers: { authorization: 'Basic abc' } });
    expect(basic.status).toBe(401);
  });

  it("refuses a token of tenant A on tenant B's host (403 wrong_tenant)", async () => {
    const token = await tokenFor(node, 'globex', 'gina');
    expect(problem(await ping(token, 'acme'))).toMatchObject({ status: 403, code: 'wrong_tenant' });
    await expect(node.services.auth.verifyAccessToken('acme', token)).rejects.toMatchObject({ code: 'wrong_tenant' });
  });

  it('answers 401 without a token and 403 without the permission of the table', async () => {
    const anon = await node.http.post('/api/account/impersonate', { tenant: 'acme', body: { username: 'alice' } });
    expect(problem(anon)).toMatchObject({ status: 401, code: 'unauthenticated' });
    const pat = await tokenFor(node, 'acme', 'pat');
    const denied = await node.http.post('/api/account/impersonate', {
      tenant: 'acme',
      token: pat,
      body: { username: 'alice' },
    });
    expect(problem(denied)).toMatchObject({ status: 403, code: 'permission_denied' });
    const role = await node.http.post('/api/account/assignRole', {
      tenant: 'acme',
      token: pat,
      body: { userId: aliceId, role: 'patient' },
    });
    expect(role.status).toBe(403);
  });

  it('a refresh whose answer was lost: the same token again soon after rotates once more; after the window it is reuse', async () => {
    const refresh = (refreshToken: string) =>
      node.http.post('/api/account/refresh', { tenant: 'acme', body: { refreshToken } });
    const login = await loginFor(node, 'acme', 'alice');
    const lost = await refresh(login.refreshToken);
    expect(lost.status).toBe(200);
    // The phone never got that answer and asks again with the token it has.
    const retried = await refresh(login.refreshToken);
    expect(retried.status).toBe(200);
    expect(retried.body.refreshToken).not.toBe(lost.body.refreshToken);
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token: retried.body.accessToken })).status).toBe(
      200,
    );
    const next = await refresh(retried.body.refreshToken);
    expect(next.status).toBe(200);
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token: next.body.accessToken })).status).toBe(
      200,
    );
    expect(
      (await node.services.auth.audit.list('acme', { action: 'session.refresh_retried' })).filter(
        (a) => (a.details as { sessionId?: string }).sessionId === login.sessionId,
      ),
    ).toHaveLength(1);

    // Past the window (the last rotation moved 60 s back), the superseded token is reuse.
    const other = await loginFor(node, 'acme', 'alice');
    const rotated = await refresh(other.refreshToken);
    expect(rotated.status).toBe(200);
    const { db } = await node.services.tenants.require('acme');
    await db.models.Session.updateOne(
      { _id: other.sessionId },
      { $set: { lastUsedAt: new Date(Date.now() - 60_000) } },
    );
    expect(problem(await refresh(other.refreshToken))).toMatchObject({ status: 401, code: 'session_revoked' });
    expect(problem(await refresh(rotated.body.refreshToken))).toMatchObject({ status: 401, code: 'session_revoked' });
  });

  it('rotates refresh tokens once and revokes the session when an older one is presented again', async () => {
    const login = await loginFor(node, 'acme', 'alice');
    const expired = await node.services.auth.tokens.issue(
      { sub: aliceId, tenant: 'acme', role: 'clinician', perms: [], sid: login.sessionId, preferred_username: 'alice' },
      -60,
    );
    // A stale bearer token sent along with the refresh is ignored, not refused.
    const first = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      token: expired.token,
      body: { refreshToken: login.refreshToken },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ tokenType: 'Bearer', sessionId: login.sessionId });
    expect(first.body.refreshToken).not.toBe(login.refreshToken);
    // The refreshed token keeps the role's rights: a call that needs one (contacts:read), not a ping.
    expect(decodeJwt(first.body.accessToken).perms).toEqual(login.permissions);
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token: first.body.accessToken })).status).toBe(
      200,
    );
    const second = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: first.body.refreshToken },
    });
    expect(second.status).toBe(200);
    // Used once before its session is revoked, so this node holds its checked signature (decision 1149):
    // the revocation below must still refuse it.
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token: second.body.accessToken })).status).toBe(
      200,
    );
    // Two rotations back: reuse, whatever the grace of a lost answer (decision 1103).
    const reuse = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(problem(reuse)).toMatchObject({ status: 401, code: 'session_revoked' });
    const after = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: second.body.refreshToken },
    });
    expect(problem(after)).toMatchObject({ status: 401, code: 'session_revoked' });
    expect(problem(await ping(second.body.accessToken))).toMatchObject({ status: 401, code: 'session_revoked' });
    const audit = await node.services.auth.audit.list('acme', { action: 'session.reuse_detected' });
    expect(audit.filter((a) => (a.details as { sessionId?: string }).sessionId === login.sessionId)).toHaveLength(1);
    const junk = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: 'rt_nonsense-token' },
    });
    expect(problem(junk)).toMatchObject({ status: 401, code: 'invalid_credentials' });
  });

  it('logout revokes refresh and access, and announces the revocation for the hub', async () => {
    const login = await loginFor(node, 'acme', 'alice');
    const seen: RevocationMessage[] = [];
    let notify!: () => void;
    const got = new Promise<void>((r) => (notify = r));
    const stop = await node.services.auth.revocations.subscribe((m) => {
      seen.push(m);
      notify();
    });
    try {
      const other = await node.http.post(`/api/account/${'0'.repeat(24)}/logout`, {
        tenant: 'acme',
        token: login.accessToken,
      });
      expect(other.status).toBe(403);
      const out = await node.http.post(`/api/account/${aliceId}/logout`, { tenant: 'acme', token: login.accessToken });
      expect(out.status).toBe(200);
      expect(out.body.revokedSessions).toBe(1);
      await got;
      expect(seen).toEqual([{ type: 'session', tenant: 'acme', sessionId: login.sessionId, userId: aliceId }]);
    } finally {
      await stop();
    }
    expect(problem(await ping(login.accessToken))).toMatchObject({ status: 401, code: 'session_revoked' });
    await expect(node.services.auth.verifyAccessToken('acme', login.accessToken)).rejects.toMatchObject({
      code: 'session_revoked',
    });
    // The session's revocation is read beside the signature check: a token naming the revoked session whose
    // signature fails is refused for its signature, the revocation counting only for a proven token.
    const [h, p, sig] = login.accessToken.split('.') as [string, string, string];
    const forged = `${h}.${p}.${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    await expect(node.services.auth.verifyAccessToken('acme', forged)).rejects.toMatchObject({ code: 'token_invalid' });
    expect(problem(await ping(forged))).toMatchObject({ status: 401, code: 'token_invalid' });
    const refresh = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(problem(refresh)).toMatchObject({ status: 401, code: 'session_revoked' });
    expect((await node.services.auth.audit.list('acme', { action: 'logout' })).length).toBe(1);
  });
});
