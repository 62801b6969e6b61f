import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { SignJWT, importJWK, type JWK } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser } from '../../support/auth.js';
import { request } from '../../support/http.js';
import { Browser, startRealmNode } from '../../support/realm.js';
import { resourceIndicator } from '../../../src/auth/oidc-realms.js';

describe('authorization code + PKCE against the embedded realm', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;

  beforeAll(async () => {
    ({ node, base, redirectUri } = await startRealmNode({ ROLES: 'http,idp', SEED_DEMO: 'true' }));
    await createUser(node, 'acme', {
      username: 'carol',
      role: 'clinician',
      displayName: 'Dr Carol',
      password: 'correct horse',
    });
    await createUser(node, 'globex', { username: 'gus', role: 'clinician', password: 'gus-password' });
  });
  afterAll(async () => node.destroy());

  /** Drives the realm's login page like a browser and returns the callback URL with the code. */
  async function authorize(tenant: string, username: string, password: string) {
    const config = await node.services.auth.realms.configuration(tenant);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const authUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email api',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    });
    const browser = new Browser(base);
    const toLogin = await browser.go('GET', authUrl.href);
    expect(toLogin.status).toBe(303);
    const page = await browser.go('GET', toLogin.headers.location!);
    expect(page.status).toBe(200);
    const action = /action="([^"]+)"/.exec(page.text)![1]!;
    const wrong = await browser.go('POST', action, { username, password: 'not-it' });
    expect(wrong.status).toBe(401);
    const posted = await browser.go('POST', action, { username, password });
    expect(posted.status).toBe(303);
    let location = posted.headers.location!;
    const hops: string[] = [location];
    for (let i = 0; i < 5 && location && !location.startsWith(redirectUri); i++) {
      const hop = await browser.go('GET', location);
      location = hop.headers.location!;
      hops.push(`${hop.status} ${location ?? hop.text.slice(0, 200)}`);
    }
    expect(hops.join(' | ')).toContain(redirectUri);
    return { callbackUrl: new URL(location, base).href, codeVerifier, state };
  }

  it('exchanges the code through the service and returns a LoginResponse with internal tokens', async () => {
    const { callbackUrl, codeVerifier, state } = await authorize('acme', 'carol', 'correct horse');
    const r = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'code', callbackUrl, codeVerifier, state },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ tokenType: 'Bearer', user: { username: 'carol', role: 'clinician' } });
    expect(r.body.permissions).toContain('events:write');
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token: r.body.accessToken })).status).toBe(200);
    const again = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'code', callbackUrl, codeVerifier, state },
    });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('invalid_credentials');
    const audit = await node.services.auth.audit.list('acme', { action: 'signin.success' });
    expect(audit[0]?.details).toMatchObject({ method: 'oidc' });
  });

  it('lets the seeded demo users sign in with the demo password', async () => {
    const { callbackUrl, codeVerifier, state } = await authorize('demo', 'alice', 'demo');
    const r = await node.http.post('/api/account/login', {
      tenant: 'demo',
      body: { method: 'code', callbackUrl, codeVerifier, state },
    });
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({ username: 'alice', role: 'clinician' });
  });

  it('refuses a wrong PKCE verifier', async () => {
    const { callbackUrl, state } = await authorize('acme', 'carol', 'correct horse');
    const r = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'code', callbackUrl, codeVerifier: oidc.randomPKCECodeVerifier(), state },
    });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('invalid_credentials');
  });

  it("accepts the realm's own access token (IdP scheme) on its tenant only", async () => {
    const { callbackUrl, codeVerifier, state } = await authorize('globex', 'gus', 'gus-password');
    const config = await node.services.auth.realms.configuration('globex');
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(callbackUrl),
      { pkceCodeVerifier: codeVerifier, expectedState: state },
      { resource: resourceIndicator(node.config.auth.oidc.audience) },
    );
    const principal = await node.services.auth.verifyAccessToken('globex', tokens.access_token);
    expect(principal).toMatchObject({ tenant: 'globex', username: 'gus', scheme: 'idp' });
    expect((await node.http.get('/api/tenant/ping', { tenant: 'globex', token: tokens.access_token })).status).toBe(
      200,
    );
    const foreign = await node.http.get('/api/tenant/ping', { tenant: 'acme', token: tokens.access_token });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('wrong_tenant');
  });

  it('refuses realm tokens that are expired, for another audience, unsigned, tampered or HMAC-signed', async () => {
    // The realm's private keys are sealed at rest: opened through the product's own store.
    const secrets = (await node.services.auth.idpSecrets.open())! as { jwks: { keys: (JWK & { kid: string })[] } };
    const rsa = secrets.jwks.keys.find((k) => k.alg === 'RS256')!;
    const key = await importJWK(rsa, 'RS256');
    const issuer = node.services.auth.realms.issuerFor('globex');
    const mint = (aud: string, exp: number) =>
      new SignJWT({ scope: 'api' })
        .setProtectedHeader({ alg: 'RS256', kid: rsa.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject('gus')
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(key);
    const now = Math.floor(Date.now() / 1000);
    const good = await mint(node.config.auth.oidc.audience, now + 60);
    const codeOf = async (token: string) =>
      (await node.http.get('/api/tenant/ping', { tenant: 'globex', token })).body.code ?? 'ok';
    expect(await codeOf(good)).toBe('ok');
    expect(await codeOf(await mint(node.config.auth.oidc.audience, now - 120))).toBe('token_expired');
    expect(await codeOf(await mint('another-api', now + 60))).toBe('token_invalid');
    const [h, p, sig] = good.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    expect(
      await codeOf(
        `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url')}.${sig}`,
      ),
    ).toBe('token_invalid');
    expect(await codeOf(`${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`)).toBe(
      'token_invalid',
    );
    const hmac = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('x'.repeat(32)));
    expect(await codeOf(hmac)).toBe('token_invalid');
  });

  it("works the same in external mode against another node's realms (OIDC_ISSUER_TEMPLATE)", async () => {
    const external = await startTestNode({
      OIDC_MODE: 'external',
      OIDC_ISSUER_TEMPLATE: `${base}/realms/{tenant}`,
      REDIS_PREFIX: node.config.redis.prefix,
      MONGODB_CATALOG_DB: node.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: node.config.mongo.tenantDbPrefix,
    });
    try {
      const { callbackUrl, codeVerifier, state } = await authorize('acme', 'carol', 'correct horse');
      const r = await external.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'code', callbackUrl, codeVerifier, state },
      });
      expect(r.status).toBe(200);
      expect(r.body.user.username).toBe('carol');
      const none = await request(external.url!, 'GET', '/realms/acme/.well-known/openid-configuration');
      expect(none.status).toBe(404);
    } finally {
      await external.stop();
    }
  });

  it('runs the same scrypt check for unknown users and users without a password as for a wrong password', async () => {
    await createUser(node, 'acme', { username: 'nopass', role: 'clinician' });
    const checks = async () => {
      const m = await node.infra.metrics.registry.getSingleMetric('idp_password_checks_total')?.get();
      return m?.values.reduce((n, v) => n + v.value, 0) ?? 0;
    };
    const config = await node.services.auth.realms.configuration('acme');
    const authUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const browser = new Browser(base);
    const page = await browser.go('GET', (await browser.go('GET', authUrl.href)).headers.location!);
    const action = /action="([^"]+)"/.exec(page.text)![1]!;
    for (const username of ['carol', 'nobody-by-this-name', 'nopass']) {
      const before = await checks();
      const r = await browser.go('POST', action, { username, password: 'not-it' });
      expect(r.status).toBe(401);
      expect(r.text).toContain('Invalid username or password');
      expect({ username, checks: (await checks()) - before }).toEqual({ username, checks: 1 });
    }
  });

  it('serves discovery per realm and a 404 problem for an unknown realm', async () => {
    const d = await request(base, 'GET', '/realms/acme/.well-known/openid-configuration', { host: new URL(base).host });
    expect(d.status).toBe(200);
    expect(d.body.issuer).toBe(`${base}/realms/acme`);
    const none = await request(base, 'GET', '/realms/nobody/.well-known/openid-configuration', {
      host: new URL(base).host,
    });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('tenant_not_found');
  });
});
