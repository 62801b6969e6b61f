import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import express from 'express';
import Provider, { errors, type Configuration } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { freePort } from '../../support/net.js';
import { Browser, authorizeIn } from '../../support/realm.js';
import { multipart, xlsx } from '../../support/form.js';
import { connect } from '../../support/hub-client.js';
import type { ImportProgressPush } from '../../../src/core/import.service.js';
import { resourceIndicator } from '../../../src/auth/oidc-realms.js';

/** A person known to the hospital's own identity provider. */
interface HospitalAccount {
  sub: string;
  username: string;
  password: string;
  email: string;
  emailVerified: boolean;
}

const TENANT = 'stcath';
const CLIENT_ID = 'consult-web';
const CLIENT_SECRET = 'hospital-registered-client-secret-0123456789';
const AUDIENCE = 'consult-api';

const ACCOUNTS: HospitalAccount[] = [
  // The IdP's usernames differ from the service's: binding goes by the verified email.
  { sub: 'hosp-0001', username: 'hnurse', password: 'admin-pw', email: 'Head.Nurse@stcath.org', emailVerified: true },
  { sub: 'hosp-0002', username: 'n1', password: 'nurse-pw', email: 'nurse.one@stcath.org', emailVerified: true },
  // Claims the admin's email without the IdP having verified it.
  { sub: 'hosp-0666', username: 'mallory', password: 'm-pw', email: 'head.nurse@stcath.org', emailVerified: false },
  // A verified email nobody waits for, with the admin's service username as its IdP username.
  { sub: 'hosp-0777', username: 'head.nurse', password: 'e-pw', email: 'eve@stcath.org', emailVerified: true },
];

/**
 * The hospital's own OpenID provider, separate from the service: discovery, JWKS, authorization code with
 * PKCE for the service's registered client, JWT access tokens for the API audience carrying the person's
 * email, `email_verified` and `preferred_username`, and a plain login form (no consent screen).
 */
async function startHospitalIdp(redirectUri: string): Promise<{ server: Server; base: string; template: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const mount = `/hospital/${TENANT}`;
  const issuer = `${base}${mount}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'hospital-1', alg: 'RS256', use: 'sig' };
  const bySub = new Map(ACCOUNTS.map((a) => [a.sub, a]));
  const claimsOf = (a: HospitalAccount) => ({
    sub: a.sub,
    name: a.username,
    preferred_username: a.username,
    email: a.email,
    email_verified: a.emailVerified,
  });
  const resource = resourceIndicator(AUDIENCE);
  const config: Configuration = {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    jwks: { keys: [jwk] } as Configuration['jwks'],
    cookies: { keys: ['hospital-cookie-key-for-tests'] },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'profile', 'email', 'api'],
    findAccount: async (_ctx, sub) => {
      const a = bySub.get(sub);
      return a ? { accountId: sub, claims: () => claimsOf(a) } : undefined;
    },
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          const t = token as { accountId?: string; sessionUid?: string };
          const a = t.accountId ? bySub.get(t.accountId) : undefined;
          if (a) Object.assign(jwt.payload, claimsOf(a));
          if (t.sessionUid) jwt.payload.sid = t.sessionUid;
        },
      },
    },
    interactions: { url: (_ctx, i) => `${mount}/interaction/${i.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return { scope: 'api', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 300 };
        },
      },
    },
    ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 300, Session: 3600, Grant: 3600 },
  };
  const provider = new Provider(issuer, config);
  const form = (uid: string, error = '') =>
    `<html><body>${error}<form method="post" action="${mount}/interaction/${uid}/login">` +
    `<input name="username"><input name="password" type="password"></form></body></html>`;

  const app = express();
  app.get(`${mount}/interaction/:uid`, async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') return void res.type('html').send(form(details.uid));
      const d = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      const grant = new provider.Grant({
        accountId: details.session!.accountId,
        clientId: String(details.params.client_id),
      });
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (e) {
      next(e);
    }
  });
  app.post(`${mount}/interaction/:uid/login`, express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      const a = ACCOUNTS.find((x) => x.username === req.body.username && x.password === req.body.password);
      if (!a) return void res.status(401).type('html').send(form(details.uid, 'Invalid'));
      await provider.interactionFinished(req, res, { login: { accountId: a.sub } }, { mergeWithLastSubmission: false });
    } catch (e) {
      next(e);
    }
  });
  app.use(mount, provider.callback());
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, base, template: `${base}/hospital/{tenant}` };
}

/**
 * Onboarding a hospital that brings its own identity provider (OIDC_MODE=external): provisioning names the
 * first admin by email, the admin's first sign-in at the hospital's IdP binds and makes them admin, the admin
 * imports and activates users, an imported user's first sign-in binds them with the imported role; an
 * unverified or other email is refused and cannot take a waiting account.
 */
describe('onboarding a hospital with its own identity provider', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;
  let idp: { server: Server; base: string; template: string };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/callback`;
    idp = await startHospitalIdp(redirectUri);
    node = await startTestNode({
      ROLES: 'http,hub,workers',
      PORT: String(port),
      PUBLIC_URL: base,
      OIDC_MODE: 'external',
      OIDC_ISSUER_TEMPLATE: idp.template,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_AUDIENCE: AUDIENCE,
    });
  });
  afterAll(async () => {
    await node?.destroy();
    idp.server.closeAllConnections();
    await new Promise((resolve) => idp.server.close(resolve));
  });

  /** Signs in at the hospital's IdP (code + PKCE) and hands the callback to the service. */
  async function signIn(username: string) {
    const password = ACCOUNTS.find((a) => a.username === username)!.password;
    const a = await authorizeIn(node, new Browser(idp.base), TENANT, redirectUri, { username, password });
    return node.http.post('/api/account/login', {
      tenant: TENANT,
      body: { method: 'code', callbackUrl: a.callbackUrl, codeVerifier: a.codeVerifier, state: a.state },
    });
  }

  const me = (token: string) =>
    node.http.post('/graphql', {
      tenant: TENANT,
      token,
      body: { query: '{ me { id username email role permissions scheme } }' },
    });

  it('provisions, binds the first admin, imports and activates users, binds an imported user; refuses strangers', async () => {
    const r = await node.http.post(
      `/api/admin/migrate/${TENANT}?code=${encodeURIComponent(node.config.auth.provisioningCode)}`,
      { body: { displayName: 'St Catherine', admin: { username: 'head.nurse', email: 'head.nurse@stcath.org' } } },
    );
    expect(r.status).toBe(200);
    expect(r.body.admin).toMatchObject({
      username: 'head.nurse',
      role: 'admin',
      created: true,
      ready: false,
      binding: { email: 'head.nurse@stcath.org', username: 'head.nurse' },
    });
    expect(r.body.admin.setPasswordUrl).toBeUndefined();

    // Before the admin signs in: an unverified claim of the admin's email, and a verified other email whose
    // IdP username equals the admin's service username, are both refused and take nothing.
    for (const stranger of ['mallory', 'head.nurse']) {
      const refused = await signIn(stranger);
      expect({ stranger, status: refused.status, code: refused.body.code }).toEqual({
        stranger,
        status: 401,
        code: 'token_invalid',
      });
    }

    const login = await signIn('hnurse');
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ id: r.body.admin.userId, username: 'head.nurse', role: 'admin' });
    const admin = login.body.accessToken as string;
    const who = await me(admin);
    expect(who.body.data.me).toMatchObject({ id: r.body.admin.userId, username: 'head.nurse', role: 'admin' });
    expect(who.body.data.me.permissions).toEqual(expect.arrayContaining(['tenant:admin', 'users:import']));
    const bound = await node.services.auth.audit.list(TENANT, { action: 'account.bound' });
    expect(bound.map((b) => [b.subjectId, b.details])).toEqual([
      [r.body.admin.userId, { by: 'email', purpose: expect.any(String) }],
    ]);
    // Bound once: the stranger still cannot take it, and the admin's next sign-in is the same account.
    expect((await signIn('mallory')).status).toBe(401);
    expect((await signIn('hnurse')).body.user.id).toBe(r.body.admin.userId);
    // Provisioning again reports the account as ready, with no new binding.
    const again = await node.http.post(
      `/api/admin/migrate/${TENANT}?code=${encodeURIComponent(node.config.auth.provisioningCode)}`,
      { body: { admin: { username: 'head.nurse', email: 'head.nurse@stcath.org' } } },
    );
    expect(again.body.admin).toMatchObject({ userId: r.body.admin.userId, created: false, ready: true });
    expect(again.body.admin.binding).toBeUndefined();

    // The admin imports staff, hears the import complete, and activates the nurse.
    const socket = await connect(base, TENANT, { token: admin, transport: 'default' });
    const completed = new Promise<ImportProgressPush>((resolve) =>
      socket.on('importProgress', (p: ImportProgressPush) => {
        if (p.status !== 'running') resolve(p);
      }),
    );
    const sheet = await xlsx([
      ['username', 'email', 'display name', 'role'],
      ['nurse.one', 'nurse.one@stcath.org', 'Nurse One', 'clinician'],
      ['nurse.two', 'nurse.two@stcath.org', 'Nurse Two', 'clinician'],
    ]);
    const upload = multipart([{ name: 'file', file: { fileName: 'staff.xlsx', content: sheet } }]);
    const up = await node.http.post('/api/uploads/pendingUsers', {
      tenant: TENANT,
      token: admin,
      rawBody: upload.body,
      headers: upload.headers,
    });
    expect(up.status).toBe(202);
    try {
      expect(await completed).toMatchObject({ importId: up.body.importId, status: 'completed', rowsImported: 2 });
    } finally {
      socket.close();
    }
    const activated = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: TENANT,
      token: admin,
      body: { importId: up.body.importId },
    });
    expect(activated.status).toBe(200);
    expect(activated.body.results).toEqual([
      {
        username: 'nurse.one',
        outcome: 'activated',
        account: expect.objectContaining({
          username: 'nurse.one',
          role: 'clinician',
          ready: false,
          binding: { email: 'nurse.one@stcath.org', username: 'nurse.one' },
        }),
      },
      expect.objectContaining({ username: 'nurse.two', outcome: 'activated' }),
    ]);

    // The nurse signs in at the hospital's IdP (its username there is 'n1') and is the imported clinician.
    const nurse = await signIn('n1');
    expect(nurse.status).toBe(200);
    expect(nurse.body.user).toMatchObject({
      id: activated.body.results[0].account.userId,
      username: 'nurse.one',
      role: 'clinician',
    });
    const nurseMe = await me(nurse.body.accessToken);
    expect(nurseMe.body.data.me).toMatchObject({ username: 'nurse.one', role: 'clinician' });
    expect(nurseMe.body.data.me.permissions).not.toContain('tenant:admin');
    // Strangers still take no waiting account (nurse.two waits for its own verified email).
    expect((await signIn('head.nurse')).body.code).toBe('token_invalid');
    const all = await node.services.auth.audit.list(TENANT, { action: 'account.bound' });
    expect(all.map((b) => b.subjectId).sort()).toEqual(
      [r.body.admin.userId, activated.body.results[0].account.userId].sort(),
    );
    // The service serves no realm of its own in external mode.
    const discovery = await node.http.get(`/realms/${TENANT}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(404);
  });
});
