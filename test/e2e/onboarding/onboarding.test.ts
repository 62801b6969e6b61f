import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestNode } from '../../support/node.js';
import { Browser, authorizeIn, startRealmNode } from '../../support/realm.js';

/**
 * From "a tenant exists" to "people use it", as an operator and a hospital would do it with the embedded
 * realm: provisioning names the first admin, who sets a password through the one-time link, signs in
 * through the realm (code + PKCE) and gets an admin session.
 */
describe('onboarding a hospital', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;

  beforeAll(async () => {
    ({ node, base, redirectUri } = await startRealmNode({ ROLES: 'http,idp,workers' }));
  });
  afterAll(async () => node.destroy());

  const provision = (tenant: string, body: unknown) =>
    node.http.post(`/api/admin/migrate/${tenant}?code=${encodeURIComponent(node.config.auth.provisioningCode)}`, {
      body,
    });

  /** Opens a link in a fresh browser and submits its form. */
  async function setPassword(link: string, password: string, confirm = password) {
    const browser = new Browser(base);
    const page = await browser.go('GET', link);
    const token = /name="token" value="([^"]+)"/.exec(page.text)?.[1];
    const action = /action="([^"]+)"/.exec(page.text)?.[1];
    const posted = page.status === 200 ? await browser.go('POST', action!, { token: token!, password, confirm }) : page;
    return { page, posted };
  }

  async function signIn(tenant: string, username: string, password: string) {
    const a = await authorizeIn(node, new Browser(base), tenant, redirectUri, { username, password });
    return node.http.post('/api/account/login', {
      tenant,
      body: { method: 'code', callbackUrl: a.callbackUrl, codeVerifier: a.codeVerifier, state: a.state },
    });
  }

  it('provisioning names the first admin, who sets a password through the one-time link and signs in', async () => {
    const r = await provision('stmary', {
      displayName: 'St Mary',
      admin: { username: 'head.nurse', email: 'head.nurse@stmary.org', displayName: 'Head Nurse' },
    });
    expect(r.status).toBe(200);
    expect(r.body.admin).toMatchObject({
      username: 'head.nurse',
      role: 'admin',
      created: true,
      ready: false,
      setPasswordUrl: expect.stringMatching(new RegExp(`^${base}/realms/stmary/set-password\\?token=`)),
    });
    const link = r.body.admin.setPasswordUrl as string;

    // Before a password is set, the realm refuses every password.
    await expect(signIn('stmary', 'head.nurse', 'anything-at-all-1')).rejects.toThrow(/realm login failed: 401/);

    const weak = await setPassword(link, 'short');
    expect(weak.page.status).toBe(200);
    expect(weak.page.headers['cache-control']).toBe('no-store');
    expect(weak.page.text).toContain('data-username>head.nurse<');
    expect(weak.posted.status).toBe(422);
    const differ = await setPassword(link, 'a-long-enough-secret', 'another-long-secret');
    expect({ status: differ.posted.status, says: /differ/.test(differ.posted.text) }).toEqual({
      status: 422,
      says: true,
    });

    const done = await setPassword(link, 'correct horse battery staple');
    expect(done.posted.status).toBe(200);
    expect(done.posted.text).toContain('Password set');
    // One time only.
    expect((await setPassword(link, 'another horse battery staple')).page.status).toBe(410);

    const login = await signIn('stmary', 'head.nurse', 'correct horse battery staple');
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ username: 'head.nurse', role: 'admin' });
    const audit = await node.services.auth.audit.list('stmary', { subjectId: r.body.admin.userId });
    expect(audit.map((a) => a.action).sort()).toEqual([
      'account.password_set',
      'account.setup.link',
      'signin.failure',
      'signin.success',
    ]);
  });

  it('a newer link replaces the older one; an account that can sign in gets no link; a tenant admin stays the admin', async () => {
    const first = await provision('stjohn', { admin: { username: 'chief' } });
    const second = await provision('stjohn', { admin: { username: 'chief' } });
    expect({ created: second.body.admin.created, ready: second.body.admin.ready }).toEqual({
      created: false,
      ready: false,
    });
    expect((await setPassword(first.body.admin.setPasswordUrl, 'correct horse battery staple')).page.status).toBe(410);
    expect((await setPassword(second.body.admin.setPasswordUrl, 'correct horse battery staple')).posted.status).toBe(
      200,
    );
    const third = await provision('stjohn', { admin: { username: 'chief' } });
    expect(third.body.admin).toEqual({
      userId: first.body.admin.userId,
      username: 'chief',
      role: 'admin',
      created: false,
      ready: true,
    });
  });

  it('refuses a bad admin name, a wrong provisioning code, and links of another tenant', async () => {
    const bad = await provision('stpaul', { admin: { username: 'no spaces allowed' } });
    expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const wrong = await node.http.post('/api/admin/migrate/stpaul?code=not-the-code', {
      body: { admin: { username: 'x.admin' } },
    });
    expect(wrong.status).toBe(403);
    const ok = await provision('stpaul', { admin: { username: 'p.admin' } });
    const elsewhere = ok.body.admin.setPasswordUrl.replace('/realms/stpaul/', '/realms/stmary/');
    expect((await setPassword(elsewhere, 'correct horse battery staple')).page.status).toBe(410);
    expect((await setPassword(ok.body.admin.setPasswordUrl.replace(/token=.*/, 'token=forged'), 'x')).page.status).toBe(
      410,
    );
  });
});
