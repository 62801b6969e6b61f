import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../../support/node.js';
import { freePort } from '../../support/net.js';
import { testEnv } from '../../support/env.js';
import {
  externalIdpEnv,
  signInAtHospital,
  startHospitalIdp,
  type HospitalAccount,
  type HospitalIdp,
} from '../../support/hospital-idp.js';

const run = promisify(execFile);
const TENANT = 'stluke';

const ACCOUNTS: HospitalAccount[] = [
  // The admin's IdP username differs from the service username the operator gave: binding goes by email.
  { sub: 'luke-0001', username: 'mward', password: 'admin-pw', email: 'Matron.Ward@stluke.org', emailVerified: true },
  // A verified other email whose IdP username is the admin's service username.
  { sub: 'luke-0777', username: 'matron', password: 'e-pw', email: 'eve@stluke.org', emailVerified: true },
];

/**
 * The operator's other onboarding path with the hospital's own identity provider (OIDC_MODE=external): the
 * tenant CLI, run as a real process with the node's settings, creates the tenant and names its first admin
 * by email; the admin's first sign-in at the hospital's provider (code flow with PKCE) takes the account and
 * has admin rights; an IdP account with the admin's username but another verified email is refused.
 */
describe('onboarding through the tenant CLI with the hospital’s own identity provider', () => {
  let node: TestNode;
  let idp: HospitalIdp;
  let redirectUri: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/callback`;
    idp = await startHospitalIdp({ tenant: TENANT, accounts: ACCOUNTS, redirectUri });
    // One set of settings for the node and the CLI, as on a service host.
    env = testEnv({ ROLES: 'http', PORT: String(port), PUBLIC_URL: base, ...externalIdpEnv(idp) });
    node = await startTestNode(env);
  });
  afterAll(async () => {
    await node?.destroy();
    await idp?.close();
  });

  const signIn = (username: string) =>
    signInAtHospital(
      node,
      idp,
      TENANT,
      redirectUri,
      ACCOUNTS.find((a) => a.username === username)!,
    );

  it('the CLI creates the tenant with its admin named by email; the admin signs in at the hospital and administers it', async () => {
    const cli = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/tenant.cli.ts',
        'create',
        TENANT,
        'St Luke Hospital',
        '--admin',
        'matron',
        '--admin-email',
        'matron.ward@stluke.org',
      ],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } },
    );
    expect(cli.stderr).toContain(`(catalog ${node.config.mongo.catalogDb})`);
    const created = JSON.parse(cli.stdout);
    expect(created.admin).toMatchObject({
      username: 'matron',
      role: 'admin',
      created: true,
      ready: false,
      binding: { email: 'matron.ward@stluke.org', username: 'matron' },
    });
    // No set-password link: the hospital's provider holds the credentials.
    expect(created.admin.setPasswordUrl).toBeUndefined();
    // The operator is told how the admin gets in instead: the first sign-in at the tenant's provider.
    expect(cli.stderr).not.toMatch(/set-password|one-time link/);
    expect(cli.stderr).toContain(
      `the first sign-in at ${idp.template.replace('{tenant}', TENANT)} whose token carries the verified email matron.ward@stluke.org becomes matron`,
    );

    // The IdP account with the admin's service username but another verified email takes nothing.
    const stranger = await signIn('matron');
    expect({ status: stranger.status, code: stranger.body.code }).toEqual({ status: 401, code: 'token_invalid' });

    const login = await signIn('mward');
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ id: created.admin.userId, username: 'matron', role: 'admin' });
    const token = login.body.accessToken as string;
    // A call that needs admin rights (tenant:admin) succeeds with the admin's token.
    const configured = await node.http.patch('/api/admin/tenantConfig', {
      tenant: TENANT,
      token,
      body: { displayName: 'St Luke Hospital (pilot)' },
    });
    expect(configured.status).toBe(200);
    expect(configured.body.displayName).toBe('St Luke Hospital (pilot)');
    const bound = await node.services.auth.audit.list(TENANT, { action: 'account.bound' });
    expect(bound.map((b) => [b.subjectId, b.details])).toEqual([
      [created.admin.userId, { by: 'email', purpose: 'first-admin' }],
    ]);
    // Once bound, the stranger still takes nothing.
    expect((await signIn('matron')).body.code).toBe('token_invalid');
  }, 90_000);
});
