import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { SignJWT, decodeJwt, generateKeyPair, importJWK, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort } from '../../support/auth.js';
import { Browser, authorizeIn } from '../../support/realm.js';
import { connect, recorder, type HubClient } from '../../support/hub-client.js';
import { request } from '../../support/http.js';
import { resourceIndicator } from '../../../src/auth/oidc-realms.js';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * OpenID Connect Back-Channel Logout: the realm posts a logout token signed with its own key (as
 * Keycloak does for a client with a back-channel logout URL). Outside clients only: the realm's tokens
 * come from a real code + PKCE sign-in, the logout token is signed with the realm's actual signing key,
 * and the effect is observed on REST and on an open hub socket.
 */
describe('back-channel logout from the realm', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;
  let realmKey: { key: Parameters<SignJWT['sign']>[0]; kid: string; alg: string };
  const open: HubClient[] = [];

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/callback`;
    node = await startTestNode({ ROLES: 'http,idp,hub,actors', PORT: String(port), PUBLIC_URL: base });
    for (const u of ['ivy', 'jack', 'kate', 'liam'])
      await createUser(node, 'acme', { username: u, role: 'clinician', password: `${u}-password` });
    const jwk = (await node.services.auth.idpSecrets.load()).jwks.keys.find((k) => k.alg === 'RS256') as JWK;
    realmKey = { key: await importJWK(jwk, 'RS256'), kid: jwk.kid!, alg: 'RS256' };
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  async function realmToken(username: string): Promise<{ accessToken: string; sid: string; sub: string }> {
    const browser = new Browser(base);
    const a = await authorizeIn(node, browser, 'acme', redirectUri, {
      username,
      password: `${username}-password`,
      prompt: 'consent',
    });
    const config = await node.services.auth.realms.configuration('acme');
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(a.callbackUrl!),
      { pkceCodeVerifier: a.codeVerifier, expectedState: a.state },
      { resource: resourceIndicator(node.config.auth.oidc.audience) },
    );
    const claims = decodeJwt(tokens.access_token);
    expect(typeof claims.sid).toBe('string');
    return { accessToken: tokens.access_token, sid: String(claims.sid), sub: String(claims.sub) };
  }

  /** A logout token as the realm would sign it; `over` replaces or (undefined) removes claims. */
  async function logoutToken(
    over: Record<string, unknown>,
    key: { key: Parameters<SignJWT['sign']>[0]; kid: string; alg: string } = realmKey,
  ): Promise<string> {
    const claims: Record<string, unknown> = {
      iss: node.services.auth.realms.issuerFor('acme'),
      aud: node.config.auth.oidc.clientId,
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      events: { [EVENT]: {} },
      ...over,
    };
    for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
    return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'logout+jwt' }).sign(key.key);
  }

  function post(token: string) {
    return request(base, 'POST', '/api/account/backchannel-logout', {
      tenant: 'acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: new URLSearchParams({ logout_token: token }).toString(),
    });
  }

  const rest = async (token: string) => {
    const r = await node.http.get('/api/tenant/ping', { tenant: 'acme', token });
    return r.status === 200 ? 'ok' : r.body.code;
  };

  it('a logout token naming the realm session ends its tokens on REST and its open hub socket at once', async () => {
    const t = await realmToken('ivy');
    expect(await rest(t.accessToken)).toBe('ok');
    const socket = await connect(node.url!, 'acme', { token: t.accessToken });
    open.push(socket);
    const pushes = recorder(socket);

    const r = await post(await logoutToken({ sid: t.sid, sub: t.sub }));
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(await pushes.next('sessionEnded')).toMatchObject({ code: 'session_revoked' });
    expect(await rest(t.accessToken)).toBe('session_revoked');
  });

  it('a logout token naming only the user refuses every realm token of the user issued so far', async () => {
    const t1 = await realmToken('jack');
    const t2 = await realmToken('jack');
    expect([await rest(t1.accessToken), await rest(t2.accessToken)]).toEqual(['ok', 'ok']);
    const r = await post(await logoutToken({ sub: t1.sub }));
    expect(r.status).toBe(200);
    expect([await rest(t1.accessToken), await rest(t2.accessToken)]).toEqual(['session_revoked', 'session_revoked']);
  });

  it('refuses a replayed logout token', async () => {
    const t = await realmToken('kate');
    const token = await logoutToken({ sid: t.sid });
    expect((await post(token)).status).toBe(200);
    const again = await post(token);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('logout_token_invalid');
  });

  it('refuses forged and malformed logout tokens and leaves the session working', async () => {
    const t = await realmToken('liam');
    const other = await generateKeyPair('RS256');
    const cases: Record<string, string> = {
      'wrong key': await logoutToken({ sid: t.sid }, { key: other.privateKey, kid: realmKey.kid, alg: 'RS256' }),
      'wrong audience': await logoutToken({ sid: t.sid, aud: 'someone-else' }),
      'wrong issuer': await logoutToken({ sid: t.sid, iss: `${base}/realms/other` }),
      'with a nonce': await logoutToken({ sid: t.sid, nonce: 'n-0S6_WzA2Mj' }),
      'without events': await logoutToken({ sid: t.sid, events: undefined }),
      'with another event': await logoutToken({ sid: t.sid, events: { 'http://schemas.openid.net/event/other': {} } }),
      'without sid or sub': await logoutToken({}),
      'without jti': await logoutToken({ sid: t.sid, jti: undefined }),
      'issued long ago': await logoutToken({ sid: t.sid, iat: Math.floor(Date.now() / 1000) - 3600 }),
      'issued in the future': await logoutToken({ sid: t.sid, iat: Math.floor(Date.now() / 1000) + 3600 }),
      'not a JWT': 'not-a-jwt-at-all',
    };
    const answers: Record<string, [number, string]> = {};
    for (const [name, token] of Object.entries(cases)) {
      const r = await post(token);
      answers[name] = [r.status, r.body?.code];
    }
    expect(answers).toEqual(Object.fromEntries(Object.keys(cases).map((k) => [k, [400, 'logout_token_invalid']])));
    expect(await rest(t.accessToken)).toBe('ok');
  });
});
