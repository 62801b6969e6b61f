import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { createUser, loginFor, tokenFor } from '../../support/auth.js';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';
import { call, connect, type HubClient } from '../../support/hub-client.js';
import { authorizeIn, Browser, startRealmNode } from '../../support/realm.js';
import type { TestNode } from '../../support/node.js';

/**
 * A session keeps its rights through every refresh (issue: a refreshed token carried `perms: []`, so every
 * client lost all rights at its first refresh; the lean-read defaults turned a root session's absent
 * permission cap into an empty one). For each sign-in method, after each of three refreshes, the new token
 * is used for something its role needs on REST, GraphQL and the hub (a connection opened with it, and an
 * open connection whose token is replaced by `refreshToken`): a ping would prove nothing. Runs on the
 * tests' MongoDB-protocol server and on the embedded default (mongo-java-server, H2 backend).
 */
interface Signed {
  accessToken: string;
  refreshToken: string;
  permissions: string[];
}

const PIN = '4826';

describe.each([
  ['the test server', false],
  ['the embedded default (H2)', true],
] as const)('a session keeps its rights through refresh, on %s', (_label, embedded) => {
  let node: TestNode;
  let redirectUri: string;
  let base: string;
  let server: DedicatedService | undefined;
  let aliceToken: string;
  let roomId: string;
  const open: HubClient[] = [];

  beforeAll(async () => {
    if (embedded) server = await dedicatedMongoJavaServer('h2');
    ({ node, redirectUri, base } = await startRealmNode({
      ROLES: 'http,idp,hub,actors',
      ...(server ? { MONGODB_URI: server.url } : {}),
    }));
    const bob = await createUser(node, 'acme', { username: 'bob', role: 'clinician', password: 'bob-password' });
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    const pat = await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    await createUser(node, 'acme', { username: 'sam', role: 'support' });
    aliceToken = await tokenFor(node, 'acme', 'alice');
    // The consultation every signed-in user of this file belongs to: its room is what the hub check joins.
    const now = Date.now();
    const event = await node.services.events.create(await node.services.auth.verifyAccessToken('acme', aliceToken), {
      name: 'Ward round',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [bob, pat].map((userId) => ({ userId, role: 'participant' as const })),
      attachments: [],
    });
    roomId = String(event._id);
  }, 180_000);
  afterAll(async () => {
    for (const s of open) s.close();
    await node?.destroy();
    await server?.destroy();
  });

  const ok = (r: { status: number; body: unknown }, what: string) => {
    if (r.status !== 200 && r.status !== 201) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as Signed;
  };

  /** Each sign-in method, through its public entrance. */
  const signIn: Record<string, () => Promise<Signed>> = {
    async sso() {
      const a = await authorizeIn(node, new Browser(base), 'acme', redirectUri, {
        username: 'bob',
        password: 'bob-password',
      });
      const r = await node.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'code', callbackUrl: a.callbackUrl, codeVerifier: a.codeVerifier, state: a.state },
      });
      return ok(r, 'code login');
    },
    async pin() {
      const pat = await tokenFor(node, 'acme', 'pat');
      ok(await node.http.post('/api/account/resetPin', { tenant: 'acme', token: pat, body: { newPin: PIN } }), 'PIN');
      const r = await node.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'pin', username: 'pat', pin: PIN },
      });
      return ok(r, 'PIN login');
    },
    async qr() {
      const c = (await node.http.get('/api/account/qrCode?deviceName=Ward%203', { tenant: 'acme' })).body as {
        code: string;
        pollSecret: string;
      };
      ok(
        await node.http.post('/api/account/approveLoginCode', {
          tenant: 'acme',
          token: aliceToken,
          body: { code: c.code },
        }),
        'QR approval',
      );
      const r = await node.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'qr', code: c.code, pollSecret: c.pollSecret },
      });
      return ok(r, 'QR login');
    },
    async offline() {
      const issued = await node.http.post('/api/account/offlineToken?purpose=ward-rounds', {
        tenant: 'acme',
        token: aliceToken,
      });
      const token = (issued.body as { token: string }).token;
      return ok(await node.http.post('/api/account/offlineLogin', { tenant: 'acme', body: { token } }), 'offline');
    },
    async impersonation() {
      const sam = await tokenFor(node, 'acme', 'sam');
      const r = await node.http.post('/api/account/impersonate', {
        tenant: 'acme',
        token: sam,
        body: { username: 'alice' },
      });
      return ok(r, 'impersonation');
    },
    async 'service session'() {
      const login = await loginFor(node, 'acme', 'alice', { method: 'oidc' });
      return { accessToken: login.accessToken, refreshToken: login.refreshToken, permissions: login.permissions };
    },
  };

  /** Uses the token for what its permissions allow, on REST, GraphQL and the hub; throws on a refusal. */
  async function useRights(token: string, perms: string[], hub: HubClient): Promise<void> {
    expect(perms).toContain('contacts:read');
    const contacts = await node.http.get('/api/contacts/get', { tenant: 'acme', token });
    expect({ rest: contacts.status, body: contacts.status === 200 ? 'ok' : contacts.body }).toEqual({
      rest: 200,
      body: 'ok',
    });
    const gql = await node.http.post('/graphql', {
      tenant: 'acme',
      token,
      body: { query: '{ myContacts(paging: { take: 5 }) { total } }' },
    });
    expect(gql.body.errors).toBeUndefined();
    expect(typeof gql.body.data.myContacts.total).toBe('number');
    // The hub: a connection opened with the token, and the long-lived one whose token it replaces.
    const fresh = await connect(node.url!, 'acme', { token });
    open.push(fresh);
    const replaced = await call(hub, 'refreshToken', token);
    expect(replaced).toMatchObject({ ok: true });
    for (const socket of [fresh, hub]) {
      if (perms.includes('meetings:join')) {
        expect(await call(socket, 'joinRoom', roomId)).toEqual({ ok: true, data: { roomId } });
      } else {
        // An offline session's scope has no meeting rights: the hub still answers what it may read.
        expect(perms).not.toContain('meetings:join');
        const denied = await call(socket, 'joinRoom', roomId);
        expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
      }
    }
    fresh.close();
  }

  it.each(Object.keys(signIn))('%s: every refreshed token carries the same rights and they work', async (method) => {
    const signed = await signIn[method]!();
    expect(signed.permissions.length).toBeGreaterThan(0);
    expect(decodeJwt(signed.accessToken).perms).toEqual(signed.permissions);
    const hub = await connect(node.url!, 'acme', { token: signed.accessToken });
    open.push(hub);
    await useRights(signed.accessToken, signed.permissions, hub);
    let refreshToken = signed.refreshToken;
    for (let i = 1; i <= 3; i++) {
      const r = await node.http.post('/api/account/refresh', { tenant: 'acme', body: { refreshToken } });
      expect(r.status).toBe(200);
      const perms = decodeJwt(r.body.accessToken).perms;
      expect({ refresh: i, perms }).toEqual({ refresh: i, perms: signed.permissions });
      await useRights(r.body.accessToken, signed.permissions, hub);
      refreshToken = r.body.refreshToken;
    }
    hub.close();
  });
});
