import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, KeyObject } from 'node:crypto';
import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor, tokenFor } from '../../support/auth.js';
import { connect } from '../../support/hub-client.js';

/**
 * Every kind of bad credential, presented to each transport: REST, GraphQL and the hub handshake.
 * Each must be refused with a 401/403 code, never served.
 */
describe('hostile tokens on REST, GraphQL and the hub handshake', () => {
  let node: TestNode;
  const bad: Record<string, string> = {};
  let userId: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    userId = await createUser(node, 'toka', { username: 'alice', role: 'clinician' });
    await createUser(node, 'tokb', { username: 'bob', role: 'admin' });
    const good = await tokenFor(node, 'toka', 'alice');
    const claims = decodeJwt(good);
    const { kid, key } = await node.services.auth.signingKeys.current();
    const sign = (p: Record<string, unknown>, aud: string, exp: number) =>
      new SignJWT({ ...p, aud: undefined, exp: undefined })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(node.config.auth.tokenIssuer)
        .setAudience(aud)
        .setExpirationTime(exp)
        .sign(key);
    const [h, , s] = good.split('.');
    const now = Math.floor(Date.now() / 1000);
    bad.expired = await sign(claims, node.config.auth.oidc.audience, now - 120);
    bad.otherAudience = await sign(claims, 'another-service', now + 300);
    bad.algNone = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${good.split('.')[1]}.`;
    bad.tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, role: 'admin', perms: ['tenant:admin'] })).toString('base64url')}.${s}`;
    bad.garbage = 'not.a.jwt';
    // The verifier's own cases (decision 1151): HS256 keyed with the public key (algorithm confusion), a
    // token of another key under a known kid, an unknown kid, and a signed exp that is not a number.
    const body = good.split('.')[1]!;
    const hsHead = Buffer.from(JSON.stringify({ alg: 'HS256', kid })).toString('base64url');
    const pem = KeyObject.from((await node.services.auth.signingKeys.publicKey(kid))!)
      .export({ type: 'spki', format: 'pem' })
      .toString();
    bad.hs256WithPublicKey = `${hsHead}.${body}.${createHmac('sha256', pem).update(`${hsHead}.${body}`).digest('base64url')}`;
    const stranger = await generateKeyPair('ES256');
    const signAs = (
      key: typeof stranger.privateKey,
      header: { alg: string; kid: string },
      p: Record<string, unknown>,
    ) => new SignJWT(p).setProtectedHeader(header).sign(key);
    bad.otherKeySameKid = await signAs(stranger.privateKey, { alg: 'ES256', kid }, claims);
    bad.unknownKid = await signAs(stranger.privateKey, { alg: 'ES256', kid: 'no-such-key' }, claims);
    bad.expNotANumber = await signAs(key, { alg: 'ES256', kid }, { ...claims, exp: 'later' });
    bad.otherTenant = await tokenFor(node, 'tokb', 'bob');
    const revoked = await loginFor(node, 'toka', 'alice');
    expect(
      (await node.http.post(`/api/account/${userId}/logout`, { tenant: 'toka', token: revoked.accessToken, body: {} }))
        .status,
    ).toBeLessThan(300);
    bad.revokedSession = revoked.accessToken;
  });
  afterAll(async () => node?.destroy());

  const CODES = ['unauthenticated', 'token_invalid', 'token_expired', 'session_revoked', 'wrong_tenant'];

  it('REST refuses no token and every bad token with a coded 401/403 problem', async () => {
    const none = await node.http.get('/api/contacts/me', { tenant: 'toka' });
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: 'unauthenticated' });
    for (const [kind, token] of Object.entries(bad)) {
      const r = await node.http.get('/api/contacts/me', { tenant: 'toka', token });
      expect({
        kind,
        status: [401, 403].includes(r.status),
        code: CODES.includes(r.body.code),
        type: String(r.headers['content-type']).split(';')[0],
      }).toEqual({ kind, status: true, code: true, type: 'application/problem+json' });
    }
  });

  it("GraphQL refuses them as GraphQL errors, with the REST answer's code and status and no data", async () => {
    const none = await node.http.post('/graphql', { tenant: 'toka', body: { query: '{ me { id } }' } });
    expect(none.body.errors[0].extensions.code).toBe('unauthenticated');
    const seen = [];
    for (const [kind, token] of Object.entries(bad)) {
      const rest = await node.http.get('/api/contacts/me', { tenant: 'toka', token });
      const r = await node.http.post('/graphql', { tenant: 'toka', token, body: { query: '{ me { id username } }' } });
      seen.push({
        kind,
        status: r.status,
        type: String(r.headers['content-type']).split(';')[0],
        code: r.body.errors?.[0]?.extensions?.code,
        data: 'data' in r.body,
        challenge: r.headers['www-authenticate'] ?? null,
      });
      expect(seen.at(-1)).toEqual({
        kind,
        status: rest.status,
        type: 'application/json',
        code: rest.body.code,
        data: false,
        challenge: rest.status === 401 ? 'Bearer error="invalid_token"' : null,
      });
    }
    expect(seen.map((x) => x.code).every((c) => CODES.includes(c))).toBe(true);
    expect(seen).toHaveLength(Object.keys(bad).length);
  });

  it('the hub handshake refuses them with connect_error data.code', async () => {
    await expect(connect(node.url!, 'toka')).rejects.toMatchObject({ data: { code: 'unauthenticated' } });
    for (const [kind, token] of Object.entries(bad)) {
      const err = await connect(node.url!, 'toka', { token })
        .then((s) => (s.close(), new Error('connected')))
        .catch((e: { data?: { code?: string } }) => e);
      expect({ kind, code: CODES.includes((err as { data?: { code?: string } }).data?.code ?? '') }).toEqual({
        kind,
        code: true,
      });
    }
    expect((await node.http.get('/healthz')).status).toBe(200);
  });
});
