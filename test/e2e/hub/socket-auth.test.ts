import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster } from '../../support/cluster.js';
import { call, connect, recorder, type HubClient } from '../../support/hub-client.js';
import { createUser, loginFor, tokenFor } from '../../support/auth.js';
import type { TestNode } from '../../support/node.js';

/** Resolves once the wall clock has passed `at` (epoch ms): the only way to observe a token's expiry. */
function clockPast(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now() + 250)));
}

/**
 * Hub sockets follow their credentials after the handshake: expiry ends them (with a coded reason)
 * unless the client refreshes the token on the live socket, and a role change reaches open sockets on
 * every node at once.
 */
describe('hub sockets re-check their credentials', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let n1: TestNode;
  let n2: TestNode;
  const ids: Record<string, string> = {};
  const open: HubClient[] = [];

  beforeAll(async () => {
    cluster = await startCluster(2);
    [n1, n2] = cluster.nodes as [TestNode, TestNode];
    for (const u of ['hana', 'ivan', 'jo', 'kim'])
      ids[u] = await createUser(n1, 'acme', { username: u, role: 'clinician' });
    await createUser(n1, 'acme', { username: 'root', role: 'admin' });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await cluster.destroy();
  });

  /** An internal token of a real session of `username` that expires in `seconds`. */
  async function shortToken(node: TestNode, username: string, seconds: number) {
    const login = await loginFor(node, 'acme', username);
    const { token, expiresAt } = await node.services.auth.tokens.issue(
      {
        sub: login.user.id,
        tenant: 'acme',
        role: login.user.role,
        perms: login.permissions,
        sid: login.sessionId,
        preferred_username: username,
      },
      seconds,
    );
    return { token, expiresAt: expiresAt.getTime() };
  }

  async function socketOn(node: TestNode, token: string) {
    const s = await connect(node.url!, 'acme', { token });
    open.push(s);
    return {
      socket: s,
      pushes: recorder(s),
      dropped: new Promise<string>((resolve) => s.once('disconnect', (reason) => resolve(reason))),
    };
  }

  const EVENT = '0123456789abcdef01234567';

  it("drops a socket at its token's expiry with a coded reason instead of serving meetings:host", async () => {
    const { token, expiresAt } = await shortToken(n1, 'hana', 3);
    const { socket, pushes, dropped } = await socketOn(n1, token);
    expect(await call(socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });
    // Awaited, not raced against a clock (a loaded machine may deliver it late; jest's limit catches a
    // push that never comes). Ended at the expiry, not before it: a cause-and-effect order on one clock,
    // which no load can reverse (decision 1050).
    const ended = await pushes.next('sessionEnded');
    expect(ended).toMatchObject({ code: 'token_expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt); // time-order: the push follows the expiry
    expect(await dropped).toBe('io server disconnect');
    await expect(connect(n1.url!, 'acme', { token })).rejects.toMatchObject({ data: { code: 'token_expired' } });
  });

  it('takes a demotion to patient on open sockets of every node at once', async () => {
    const admin = await tokenFor(n1, 'acme', 'root');
    const ivan = await tokenFor(n2, 'acme', 'ivan');
    const far = await socketOn(n2, ivan);
    const near = await socketOn(n1, ivan);
    expect(await call(far.socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });
    const r = await n1.http.post('/api/account/assignRole', {
      tenant: 'acme',
      token: admin,
      body: { userId: ids.ivan, role: 'patient' },
    });
    expect(r.status).toBe(200);
    for (const side of [far, near]) {
      const changed = await side.pushes.next('permissionsChanged');
      expect(changed.role).toBe('patient');
      expect(changed.permissions).not.toContain('meetings:host');
      expect(await call(side.socket, 'initEvent', { eventId: EVENT })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      expect(await call(side.socket, 'notify', 'x', { eventId: EVENT })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
    }
    // A token minted before the demotion cannot restore the old permissions on the live socket.
    expect(await call(far.socket, 'refreshToken', ivan)).toMatchObject({ ok: false, error: { code: 'token_invalid' } });
  });

  it('keeps a socket past the first expiry when the client refreshes its token on the live socket', async () => {
    const first = await shortToken(n1, 'jo', 3);
    const { socket, pushes } = await socketOn(n1, first.token);
    const refreshed = await loginFor(n1, 'acme', 'jo');
    const ack = await call(socket, 'refreshToken', refreshed.accessToken);
    expect(ack).toMatchObject({ ok: true, data: { role: 'clinician', expiresAt: refreshed.expiresAt } });
    expect(await call(socket, 'refreshToken', await tokenFor(n1, 'acme', 'kim'))).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(await call(socket, 'refreshToken', 'not-a-token')).toMatchObject({
      ok: false,
      error: { code: 'token_invalid' },
    });
    await clockPast(first.expiresAt);
    // A call sent after the first token's expiry, answered by the refreshed session; the node runs a
    // timer that is due before the packet it reads next, so an expiry the refresh left armed would have
    // ended the socket before this answer (then the call fails, or the checks below do).
    expect(await call(socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });
    expect(socket.connected).toBe(true);
    expect(pushes.of('sessionEnded')).toEqual([]);
    // The socket now belongs to the refreshed session: signing that one out drops it.
    const dropped = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
    expect(
      (await n2.http.post(`/api/account/${ids.jo}/logout`, { tenant: 'acme', token: refreshed.accessToken })).status,
    ).toBe(200);
    expect(await pushes.next('sessionEnded')).toMatchObject({ code: 'session_revoked' });
    expect(await dropped).toBe('io server disconnect');
  });
});
