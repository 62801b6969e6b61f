import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort, tokenFor } from '../../support/auth.js';
import { Browser, authorizeIn } from '../../support/realm.js';
import { connect, recorder } from '../../support/hub-client.js';
import { resourceIndicator } from '../../../src/auth/oidc-realms.js';
import type { RevocationEvent as RevocationMessage } from '../../../src/auth/revocations.js';

/**
 * Sign-out reaches the realm: after a user's logout, an admin's logout of that user, or refresh-token
 * reuse, the realm's access token is refused on REST, GraphQL and the hub handshake, the realm session
 * cookie no longer signs in without a password, and the realm refresh token mints nothing more.
 * Outside clients only: openid-client (code + PKCE) against the embedded realm, HTTP, socket.io-client.
 */
describe('realm sessions and tokens end with sign-out', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;
  const ids: Record<string, string> = {};
  let adminToken: string;
  const FULL = 'openid profile email api offline_access';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/callback`;
    node = await startTestNode({ ROLES: 'http,idp,hub,actors', PORT: String(port), PUBLIC_URL: base });
    for (const u of ['carol', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan', 'jade', 'kim'])
      ids[u] = await createUser(node, 'acme', { username: u, role: 'clinician', password: `${u}-password` });
    await createUser(node, 'acme', { username: 'root', role: 'admin' });
    adminToken = await tokenFor(node, 'acme', 'root');
  });
  afterAll(async () => node.destroy());

  const resource = () => ({ resource: resourceIndicator(node.config.auth.oidc.audience) });

  /** Signs in at the realm in a fresh browser and takes tokens straight from the realm, as a client would. */
  async function realmSignIn(username: string) {
    const browser = new Browser(base);
    const a = await authorizeIn(node, browser, 'acme', redirectUri, {
      username,
      password: `${username}-password`,
      scope: FULL,
      prompt: 'consent',
    });
    const config = await node.services.auth.realms.configuration('acme');
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(a.callbackUrl!),
      { pkceCodeVerifier: a.codeVerifier, expectedState: a.state },
      resource(),
    );
    expect(tokens.refresh_token).toBeDefined();
    return { browser, accessToken: tokens.access_token, refreshToken: tokens.refresh_token! };
  }

  /** Opens a service session from the same browser's realm session (the web app's sign-in). */
  async function serviceSignIn(browser: Browser) {
    const a = await authorizeIn(node, browser, 'acme', redirectUri);
    expect(a.callbackUrl).toBeDefined();
    const r = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'code', callbackUrl: a.callbackUrl, codeVerifier: a.codeVerifier, state: a.state },
    });
    expect(r.status).toBe(200);
    return r.body as { accessToken: string; refreshToken: string };
  }

  /** What each transport answers to a token: 'ok' or the error code. */
  async function transports(token: string) {
    const rest = await node.http.get('/api/tenant/ping', { tenant: 'acme', token });
    const gql = await node.http.post('/graphql', { tenant: 'acme', token, body: { query: '{ me { id username } }' } });
    const hub = await connect(node.url!, 'acme', { token }).then(
      (s) => {
        s.close();
        return 'ok';
      },
      (e: { data?: { code?: string } }) => e.data?.code ?? 'refused',
    );
    return {
      rest: rest.status === 200 ? 'ok' : rest.body.code,
      graphql: gql.body.data?.me ? 'ok' : (gql.body.errors?.[0]?.extensions?.code ?? gql.body.code),
      hub,
    };
  }
  const allOk = { rest: 'ok', graphql: 'ok', hub: 'ok' };
  const allRevoked = { rest: 'session_revoked', graphql: 'session_revoked', hub: 'session_revoked' };

  /** Whether the browser's realm session cookie still signs in without a password. */
  async function cookieSignsIn(browser: Browser): Promise<boolean> {
    return (await authorizeIn(node, browser, 'acme', redirectUri)).callbackUrl !== undefined;
  }

  async function realmRefresh(refreshToken: string): Promise<string> {
    const config = await node.services.auth.realms.configuration('acme');
    return (await oidc.refreshTokenGrant(config, refreshToken, resource())).access_token;
  }

  it("the user's own logout ends the realm session, its grant and its tokens", async () => {
    const realm = await realmSignIn('carol');
    const login = await serviceSignIn(realm.browser);
    expect(await transports(realm.accessToken)).toEqual(allOk);
    const out = await node.http.post(`/api/account/${ids.carol}/logout`, { tenant: 'acme', token: login.accessToken });
    expect(out.status).toBe(200);
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    await expect(realmRefresh(realm.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it("an admin's logout of the user ends every realm session, and a socket opened with a realm token", async () => {
    const realm = await realmSignIn('dave');
    const minted = await realmRefresh(realm.refreshToken);
    expect(await transports(minted)).toEqual(allOk);
    const socket = await connect(node.url!, 'acme', { token: realm.accessToken });
    const pushes = recorder(socket);
    const dropped = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
    try {
      const out = await node.http.post(`/api/account/${ids.dave}/logout`, { tenant: 'acme', token: adminToken });
      expect(out.status).toBe(200);
      expect(await pushes.next('sessionEnded')).toMatchObject({ code: 'session_revoked' });
      expect(await dropped).toBe('io server disconnect');
    } finally {
      socket.close();
    }
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    expect(await transports(minted)).toEqual(allRevoked);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    await expect(realmRefresh(realm.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('reuse of a service refresh token ends the realm session behind it', async () => {
    const realm = await realmSignIn('erin');
    const login = await serviceSignIn(realm.browser);
    const first = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(first.status).toBe(200);
    const second = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: first.body.refreshToken },
    });
    expect(second.status).toBe(200);
    // Two rotations back: reuse (the token superseded last has a grace for a lost answer, decision 1103).
    const replay = await node.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(replay.body.code).toBe('session_revoked');
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    await expect(realmRefresh(realm.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('reuse of a realm refresh token ends the realm session and refuses its access tokens', async () => {
    const realm = await realmSignIn('frank');
    const config = await node.services.auth.realms.configuration('acme');
    const rotated = await oidc.refreshTokenGrant(config, realm.refreshToken, resource());
    expect(await transports(rotated.access_token)).toEqual(allOk);
    const seen: RevocationMessage[] = [];
    let announced!: () => void;
    const ended = new Promise<void>((resolve) => (announced = resolve));
    const stop = await node.services.auth.revocations.subscribe((m) => {
      if (m.type === 'realm-session' && m.userId === ids.frank) {
        seen.push(m);
        announced();
      }
    });
    try {
      await expect(realmRefresh(realm.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
      await ended;
    } finally {
      await stop();
    }
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    expect(await transports(rotated.access_token)).toEqual(allRevoked);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    await expect(realmRefresh(rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('logging out with the realm token itself ends its realm session', async () => {
    const realm = await realmSignIn('gina');
    const out = await node.http.post(`/api/account/${ids.gina}/logout`, { tenant: 'acme', token: realm.accessToken });
    expect(out.status).toBe(200);
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    await expect(realmRefresh(realm.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
    const again = await realmSignIn('gina');
    expect(await transports(again.accessToken)).toEqual(allOk);
  });

  /** A device asks for a QR login code and the holder of `token` approves it; `redeem` is the device's poll. */
  async function qrApprovedWith(token: string) {
    const c = (await node.http.get('/api/account/qrCode?deviceName=tablet', { tenant: 'acme' })).body as {
      code: string;
      pollSecret: string;
    };
    const approved = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token,
      body: { code: c.code },
    });
    expect(approved.status).toBe(200);
    return () =>
      node.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'qr', code: c.code, pollSecret: c.pollSecret },
      });
  }
  const refresh = (refreshToken: string) =>
    node.http.post('/api/account/refresh', { tenant: 'acme', body: { refreshToken } });

  it('a QR session approved with a realm token ends when that realm session logs out', async () => {
    const realm = await realmSignIn('ivan');
    const device = await (await qrApprovedWith(realm.accessToken))();
    expect(device.status).toBe(200);
    expect(await transports(device.body.accessToken)).toEqual(allOk);
    const out = await node.http.post(`/api/account/${ids.ivan}/logout`, { tenant: 'acme', token: realm.accessToken });
    expect(out.status).toBe(200);
    expect(await transports(device.body.accessToken)).toEqual(allRevoked);
    const after = await refresh(device.body.refreshToken);
    expect([after.status, after.body.code]).toEqual([401, 'session_revoked']);
  });

  it("a QR session approved with a realm token ends when the user signs out at the realm's own logout page", async () => {
    const realm = await realmSignIn('jade');
    const device = await (await qrApprovedWith(realm.accessToken))();
    expect(device.status).toBe(200);
    // RP-initiated logout at the embedded realm: its confirmation form, then the confirmation with logout=yes.
    const form = await realm.browser.go('GET', '/realms/acme/session/end');
    expect(form.status).toBe(200);
    const action = /action="([^"]+)"/.exec(form.text)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form.text)![1]!;
    const confirmed = await realm.browser.go('POST', action, { xsrf, logout: 'yes' });
    expect(confirmed.status).toBe(303);
    expect(await cookieSignsIn(realm.browser)).toBe(false);
    expect(await transports(device.body.accessToken)).toEqual(allRevoked);
    expect(await transports(realm.accessToken)).toEqual(allRevoked);
    const after = await refresh(device.body.refreshToken);
    expect([after.status, after.body.code]).toEqual([401, 'session_revoked']);
  });

  it('a QR code approved with a realm token whose realm session ended before the poll is not redeemed', async () => {
    const realm = await realmSignIn('kim');
    const redeem = await qrApprovedWith(realm.accessToken);
    const out = await node.http.post(`/api/account/${ids.kim}/logout`, { tenant: 'acme', token: realm.accessToken });
    expect(out.status).toBe(200);
    const late = await redeem();
    expect([late.status, late.body.code]).toEqual([401, 'session_revoked']);
  });

  it('an external-mode node refuses the realm tokens of a user an admin signed out (not-before)', async () => {
    const external = await startTestNode({
      ROLES: 'http',
      OIDC_MODE: 'external',
      OIDC_ISSUER_TEMPLATE: `${base}/realms/{tenant}`,
      REDIS_PREFIX: `${node.config.redis.prefix}ext:`,
      MONGODB_CATALOG_DB: node.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: node.config.mongo.tenantDbPrefix,
    });
    try {
      const realm = await realmSignIn('hank');
      const ping = (token: string) => external.http.get('/api/tenant/ping', { tenant: 'acme', token });
      expect((await ping(realm.accessToken)).status).toBe(200);
      const admin = await tokenFor(external, 'acme', 'root');
      const out = await external.http.post(`/api/account/${ids.hank}/logout`, { tenant: 'acme', token: admin });
      expect(out.status).toBe(200);
      expect((await ping(realm.accessToken)).body.code).toBe('session_revoked');
    } finally {
      await external.stop();
    }
  });
});
