import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestNode } from '../../support/node.js';
import { Browser, authorizeIn, startRealmNode } from '../../support/realm.js';
import { multipart, xlsx } from '../../support/form.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import type { ImportProgressPush } from '../../../src/contracts/pushes.js';

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
    ({ node, base, redirectUri } = await startRealmNode({ ROLES: 'http,hub,idp,workers' }));
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

  it('the first admin imports users, watches the import, activates them, and an imported user signs in', async () => {
    const r = await provision('stluke', { admin: { username: 'ward.admin' } });
    await setPassword(r.body.admin.setPasswordUrl, 'correct horse battery staple');
    const admin = (await signIn('stluke', 'ward.admin', 'correct horse battery staple')).body.accessToken as string;

    // The admin's own connection hears how the import goes, pushed from the worker that runs it.
    const socket: HubClient = await connect(base, 'stluke', { token: admin, transport: 'default' });
    const pushes: ImportProgressPush[] = [];
    const completed = new Promise<ImportProgressPush>((resolve) =>
      socket.on('importProgress', (p) => {
        pushes.push(p);
        if (p.status !== 'running') resolve(p);
      }),
    );
    const sheet = await xlsx([
      ['username', 'email', 'display name', 'role'],
      ['nurse.one', 'nurse.one@stluke.org', 'Nurse One', 'clinician'],
      ['nurse.two', '', 'Nurse Two', 'clinician'],
      ['patient.three', '', 'Patient Three', 'patient'],
      ['bad name', '', 'Bad', 'patient'],
    ]);
    const form = multipart([{ name: 'file', file: { fileName: 'staff.xlsx', content: sheet } }]);
    const up = await node.http.post('/api/uploads/pendingUsers', {
      tenant: 'stluke',
      token: admin,
      rawBody: form.body,
      headers: form.headers,
    });
    expect(up.status).toBe(202);
    const importId = up.body.importId as string;
    try {
      expect(await completed).toEqual({
        importId,
        status: 'completed',
        rowsDone: 4,
        rowsTotal: 4,
        rowsImported: 3,
        rowErrorCount: 1,
        // Its final push is recoverable: it carries the admin's position (decision 1000).
        pos: expect.objectContaining({ seq: expect.any(Number) }),
      });
    } finally {
      socket.close();
    }
    expect(pushes.every((p) => p.importId === importId && p.rowsTotal === 4)).toBe(true);

    // The admin finds the import and its pending users.
    const imports = await node.http.get('/api/uploads/pendingUsers', { tenant: 'stluke', token: admin });
    expect(imports.status).toBe(200);
    expect(imports.body).toMatchObject({ total: 1, skip: 0 });
    expect(imports.body.items[0]).toMatchObject({
      importId,
      fileName: 'staff.xlsx',
      status: 'completed',
      rowsTotal: 4,
      rowsImported: 3,
      rowErrorCount: 1,
    });
    expect(imports.body.items[0].rowErrors).toBeUndefined();
    const listed = await node.http.get(`/api/admin/pendingUsers?importId=${importId}`, {
      tenant: 'stluke',
      token: admin,
    });
    expect(listed.body.items.map((u: { username: string; status: string }) => [u.username, u.status])).toEqual([
      ['nurse.one', 'pending'],
      ['nurse.two', 'pending'],
      ['patient.three', 'pending'],
    ]);
    const prefixed = await node.http.get('/api/admin/pendingUsers?q=nurse&status=pending', {
      tenant: 'stluke',
      token: admin,
    });
    expect(prefixed.body.total).toBe(2);

    // One by name, then the rest of the import as a batch.
    const one = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: admin,
      body: { usernames: ['Nurse.One'] },
    });
    expect(one.status).toBe(200);
    expect(one.body.results).toEqual([
      {
        username: 'nurse.one',
        outcome: 'activated',
        account: expect.objectContaining({ username: 'nurse.one', role: 'clinician', created: true, ready: false }),
      },
    ]);
    const rest = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: admin,
      body: { importId, limit: 1 },
    });
    expect(rest.body.results.map((x: { username: string; outcome: string }) => [x.username, x.outcome])).toEqual([
      ['nurse.two', 'activated'],
    ]);
    expect(rest.body.remaining).toBe(1);
    // Two admins finishing the import at once make one account and one link for the last user.
    const both = await Promise.all(
      [0, 1].map(() =>
        node.http.post('/api/admin/pendingUsers/activate', { tenant: 'stluke', token: admin, body: { importId } }),
      ),
    );
    const outcomes = both.flatMap((b) => b.body.results as { username: string; outcome: string }[]);
    expect(outcomes.filter((o) => o.outcome === 'activated').map((o) => o.username)).toEqual(['patient.three']);
    expect(both.map((b) => b.body.remaining)).toEqual([0, 0]);
    const setups = await node.infra.mongo
      .tenantDb('stluke')
      .conn.collection('account_setups')
      .countDocuments({ purpose: 'activation' });
    expect(setups).toBe(3);
    const again = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: admin,
      body: { usernames: ['nurse.one', 'nobody.here'] },
    });
    expect(again.body.results).toEqual([
      { username: 'nurse.one', outcome: 'already_activated' },
      { username: 'nobody.here', outcome: 'not_found' },
    ]);
    const activated = await node.http.get('/api/admin/pendingUsers?status=activated', {
      tenant: 'stluke',
      token: admin,
    });
    expect(activated.body.items[0]).toMatchObject({
      username: 'nurse.one',
      status: 'activated',
      userId: one.body.results[0].account.userId,
      activatedAt: expect.any(String),
    });

    // A lost link is reissued; the older one stops working; the user sets a password and signs in.
    const reissued = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: admin,
      body: { usernames: ['nurse.one'], reissue: true },
    });
    expect(reissued.body.results[0]).toMatchObject({ outcome: 'reissued', account: { ready: false } });
    expect((await setPassword(one.body.results[0].account.setPasswordUrl, 'nurse one long password')).page.status).toBe(
      410,
    );
    const set = await setPassword(reissued.body.results[0].account.setPasswordUrl, 'nurse one long password');
    expect(set.posted.status).toBe(200);
    const nurse = await signIn('stluke', 'nurse.one', 'nurse one long password');
    expect(nurse.status).toBe(200);
    expect(nurse.body.user).toMatchObject({ username: 'nurse.one', role: 'clinician' });

    // A clinician can neither list nor activate; another tenant's admin sees none of this import.
    const clinician = nurse.body.accessToken as string;
    const refused = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: clinician,
      body: { importId },
    });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'permission_denied' });
    expect((await node.http.get('/api/admin/pendingUsers', { tenant: 'stluke', token: clinician })).status).toBe(403);
    const other = await provision('stmark', { admin: { username: 'mark.admin' } });
    await setPassword(other.body.admin.setPasswordUrl, 'correct horse battery staple');
    const otherAdmin = (await signIn('stmark', 'mark.admin', 'correct horse battery staple')).body
      .accessToken as string;
    expect((await node.http.get('/api/uploads/pendingUsers', { tenant: 'stmark', token: otherAdmin })).body.total).toBe(
      0,
    );
    const foreign = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stmark',
      token: otherAdmin,
      body: { importId },
    });
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 404, code: 'import_not_found' });
    const cross = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: 'stluke',
      token: otherAdmin,
      body: { importId },
    });
    expect({ status: cross.status, code: cross.body.code }).toEqual({ status: 403, code: 'wrong_tenant' });
  });
});
