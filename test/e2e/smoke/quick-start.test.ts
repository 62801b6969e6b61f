import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv } from '../../support/env.js';
import { freePort } from '../../support/net.js';
import { Browser, followAuthorization } from '../../support/realm.js';
import { xlsx } from '../../support/form.js';
import { sdkHub, sdkRest } from '../../support/sdk.js';
import { beginCodeSignIn, body, completeCodeSignIn, type HubClient } from '../../../packages/client/src/index.js';

/**
 * What `npm start` gives a newcomer, from the outside, on the Node.js running the tests: the compiled
 * service (dist/, plain node, every role) with the demo tenant seeded; a demo user signs in with the
 * published password through the embedded realm, makes a hub call, and an admin's upload runs as a job
 * on the service's own worker. CI runs this file alone on Node 22 (`npm run test:smoke`), the supported
 * line the whole suite does not run on (decision 1060); the whole suite runs it on Node 24.
 */
describe(`the quick start on Node.js ${process.version}`, () => {
  let node: ChildNode;
  let base: string;
  const hubs: HubClient[] = [];

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // No ROLES: every role, as `npm start` runs it.
    node = await spawnChildNode(testEnv({ PORT: String(port), PUBLIC_URL: base, SEED_DEMO: 'true' }), 120_000, {
      compiled: true,
    });
  }, 150_000);
  afterAll(async () => {
    for (const h of hubs) h.close();
    if (node && node.proc.exitCode === null) await node.stop();
  });

  /** The demo user's session through the realm's sign-in form (code flow with PKCE), as a web app does. */
  async function signIn(username: string): Promise<string> {
    const redirectUri = `${base}/auth/callback`;
    const start = await beginCodeSignIn({
      issuer: `${base}/realms/demo`,
      clientId: 'consult-web',
      redirectUri,
      scope: 'openid profile email api',
      allowHttp: true,
    });
    const callbackUrl = await followAuthorization(new Browser(base), start.url.href, redirectUri, {
      username,
      password: 'demo',
    });
    const session = await completeCodeSignIn(sdkRest(base, 'demo'), start, callbackUrl!);
    expect(session.user.username).toBe(username);
    return session.accessToken;
  }

  it('runs on this Node.js and signs a demo user in, who calls another over the hub', async () => {
    expect(node.logs.some((l) => l.msg === 'node started')).toBe(true);
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    const found = await body(
      sdkRest(base, 'demo', () => alice).GET('/api/contacts/get', { params: { query: { name: 'Bob' } } }),
    );
    const bobId = found.items.find((u) => u.username === 'bob')?.id;
    expect(bobId).toBeTruthy();
    const a = sdkHub(base, 'demo', () => alice);
    const b = sdkHub(base, 'demo', () => bob);
    hubs.push(a, b);
    await Promise.all([a.connect(), b.connect()]);
    const ringing = b.next('onNewCall');
    const call = await a.call('initCall', { calleeIds: [bobId!], callType: 'video' });
    expect(call.status).toBe('ringing');
    expect((await ringing).call.callId).toBe(call.callId);
    await a.call('endCall', { callId: call.callId });
  });

  it("runs an admin's pending-users import as a job on its worker", async () => {
    const admin = await signIn('admin');
    const api = sdkRest(base, 'demo', () => admin);
    const sheet = await xlsx([
      ['username', 'displayName', 'role', 'email'],
      ['smoke.nurse', 'Nurse Smoke', 'clinician', 'smoke@demo.localhost'],
    ]);
    const form = new FormData();
    form.append(
      'file',
      new Blob([new Uint8Array(sheet)], { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }),
      'users.xlsx',
    );
    const started = await body(
      api.POST('/api/uploads/pendingUsers', { body: { file: 'users.xlsx' }, bodySerializer: () => form }),
    );
    // The service tells the job's end only through its status: read it until it is final.
    // No clock deadline (decision 1050): jest's limit for the test bounds the wait.
    let status: { status: string; rowsImported?: number } = { status: 'queued' };
    while (!['completed', 'failed'].includes(status.status)) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await body(
        api.GET('/api/uploads/pendingUsers/{importId}', { params: { path: { importId: started.importId } } }),
      )) as typeof status;
    }
    expect(status).toMatchObject({ status: 'completed', rowsImported: 1 });
  });
});
