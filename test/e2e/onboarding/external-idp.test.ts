import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { freePort } from '../../support/net.js';
import { multipart, xlsx } from '../../support/form.js';
import { connect } from '../../support/hub-client.js';
import type { ImportProgressPush } from '../../../src/contracts/pushes.js';
import {
  externalIdpEnv,
  signInAtHospital,
  startHospitalIdp,
  type HospitalAccount,
  type HospitalIdp,
} from '../../support/hospital-idp.js';

const TENANT = 'stcath';

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
 * Onboarding a hospital that brings its own identity provider (OIDC_MODE=external): provisioning names the
 * first admin by email, the admin's first sign-in at the hospital's IdP binds and makes them admin, the admin
 * imports and activates users, an imported user's first sign-in binds them with the imported role; an
 * unverified or other email is refused and cannot take a waiting account.
 */
describe('onboarding a hospital with its own identity provider', () => {
  let node: TestNode;
  let base: string;
  let redirectUri: string;
  let idp: HospitalIdp;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/callback`;
    idp = await startHospitalIdp({ tenant: TENANT, accounts: ACCOUNTS, redirectUri });
    node = await startTestNode({
      ROLES: 'http,hub,workers',
      PORT: String(port),
      PUBLIC_URL: base,
      ...externalIdpEnv(idp),
    });
  });
  afterAll(async () => {
    await node?.destroy();
    await idp?.close();
  });

  /** Signs in at the hospital's IdP (code + PKCE) and hands the callback to the service. */
  const signIn = (username: string) =>
    signInAtHospital(
      node,
      idp,
      TENANT,
      redirectUri,
      ACCOUNTS.find((a) => a.username === username)!,
    );

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
