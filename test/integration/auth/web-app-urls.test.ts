import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import type { TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { Browser, startRealmNode } from '../../support/realm.js';

/**
 * Which web app serves the sign-in callback and the QR approval page (decision 330): the service's own
 * pages by default, the deployment's (WEB_SIGNIN_REDIRECT_URI, WEB_LOGIN_APPROVE_URL) or the tenant's
 * (TenantConfig `webApp`) when set; the realm registers the redirect URI in effect. The approval page's
 * API: which device asks (GET loginCode) and refusal (POST refuseLoginCode).
 */
describe('web app URLs per deployment and tenant; QR code read and refusal', () => {
  let node: TestNode;
  let base: string;

  beforeAll(async () => {
    ({ node, base } = await startRealmNode({
      ROLES: 'http,idp',
      WEB_SIGNIN_REDIRECT_URI: 'https://{tenant}.app.example/signed-in',
      WEB_LOGIN_APPROVE_URL: 'https://{tenant}.app.example/qr?from=consult',
    }));
    await createUser(node, 'acme', {
      username: 'ann',
      role: 'clinician',
      displayName: 'Ann',
      password: 'ann-password-1',
    });
    await createUser(node, 'globex', { username: 'gil', role: 'clinician', password: 'gil-password-1' });
    const globex = (await node.services.tenants.require('globex')).db;
    await globex.models.TenantConfig.updateOne(
      { _id: 'tenant' },
      {
        $set: {
          'webApp.signInRedirectUri': 'https://clinic.globex.example/cb',
          'webApp.loginApproveUrl': 'https://clinic.globex.example/approve',
        },
      },
    );
  });
  afterAll(async () => node.destroy());

  const qr = async (tenant: string) => {
    const r = await node.http.get('/api/account/qrCode?deviceName=Cart%207', {
      tenant,
      headers: { 'user-agent': 'HeadsetApp/4.2' },
    });
    expect(r.status).toBe(201);
    return r.body as { code: string; pollSecret: string; approveUrl: string };
  };

  /** Starts an authorization at the tenant's realm for `redirectUri`: true when the realm shows its login form. */
  async function realmAccepts(tenant: string, redirectUri: string): Promise<boolean> {
    const config = await node.services.auth.realms.configuration(tenant);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const r = await new Browser(base).go('GET', url.href);
    return r.status === 303 && /\/interaction\//.test(r.headers.location ?? '');
  }

  it('the deployment setting names the approval page, the code added to its query', async () => {
    const c = await qr('acme');
    expect(c.approveUrl).toBe(`https://acme.app.example/qr?from=consult&code=${c.code}`);
  });

  it('a tenant setting overrides the deployment setting', async () => {
    const c = await qr('globex');
    expect(c.approveUrl).toBe(`https://clinic.globex.example/approve?code=${c.code}`);
    expect((await node.http.post('/api/account/org', { tenant: 'globex' })).body.realm.redirectUri).toBe(
      'https://clinic.globex.example/cb',
    );
    expect((await node.http.post('/api/account/org', { tenant: 'acme' })).body.realm.redirectUri).toBe(
      'https://acme.app.example/signed-in',
    );
  });

  it("the realm registers the redirect URI in effect beside the service's own callback, and nothing else", async () => {
    const port = new URL(base).port;
    expect(await realmAccepts('acme', 'https://acme.app.example/signed-in')).toBe(true);
    expect(await realmAccepts('acme', `http://acme.localhost:${port}/auth/callback`)).toBe(true);
    expect(await realmAccepts('acme', 'https://clinic.globex.example/cb')).toBe(false);
    expect(await realmAccepts('globex', 'https://clinic.globex.example/cb')).toBe(true);
    expect(await realmAccepts('globex', 'https://globex.app.example/signed-in')).toBe(false);
  });

  it('GET loginCode shows a signed-in user which device asks; refusal is final and the poll answers login_code_refused', async () => {
    const token = await tokenFor(node, 'acme', 'ann');
    const c = await qr('acme');
    expect((await node.http.get(`/api/account/loginCode?code=${c.code}`, { tenant: 'acme' })).status).toBe(401);
    const info = await node.http.get(`/api/account/loginCode?code=${c.code}`, { tenant: 'acme', token });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      code: c.code,
      status: 'pending',
      deviceName: 'Cart 7',
      requestedFrom: { userAgent: 'HeadsetApp/4.2' },
    });
    expect(info.body).not.toHaveProperty('pollSecret');
    expect(info.body).not.toHaveProperty('pollSecretHash');
    const refused = await node.http.post('/api/account/refuseLoginCode', {
      tenant: 'acme',
      token,
      body: { code: c.code },
    });
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ code: c.code, status: 'refused', deviceName: 'Cart 7' });
    const poll = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'qr', code: c.code, pollSecret: c.pollSecret },
    });
    expect(poll.status).toBe(403);
    expect(poll.body.code).toBe('login_code_refused');
    const approve = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token,
      body: { code: c.code },
    });
    expect(approve.body.code).toBe('login_code_refused');
    const extend = await node.http.post('/api/account/extendLoginCode', {
      tenant: 'acme',
      body: { code: c.code, pollSecret: c.pollSecret },
    });
    expect(extend.body.code).toBe('login_code_refused');
    expect((await node.http.get(`/api/account/loginCode?code=${c.code}`, { tenant: 'acme', token })).body.status).toBe(
      'refused',
    );
    const audit = await node.services.auth.audit.list('acme', { action: 'login_code.refuse' });
    expect(audit).toHaveLength(1);
  });

  it('an approved code cannot be refused; an unknown code is not found', async () => {
    const token = await tokenFor(node, 'acme', 'ann');
    const c = await qr('acme');
    expect(
      (await node.http.post('/api/account/approveLoginCode', { tenant: 'acme', token, body: { code: c.code } })).status,
    ).toBe(200);
    const late = await node.http.post('/api/account/refuseLoginCode', {
      tenant: 'acme',
      token,
      body: { code: c.code },
    });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('invalid_state');
    const unknown = await node.http.post('/api/account/refuseLoginCode', {
      tenant: 'acme',
      token,
      body: { code: 'ZZZZZZZZZZ' },
    });
    expect(unknown.status).toBe(404);
  });

  it('a deployment setting that is not an http(s) URL is refused at start', async () => {
    const { loadConfig } = await import('../../../src/config/config.js');
    expect(() => loadConfig({ WEB_LOGIN_APPROVE_URL: 'javascript:alert(1)' } as NodeJS.ProcessEnv)).toThrow(
      /WEB_LOGIN_APPROVE_URL/,
    );
  });
});
