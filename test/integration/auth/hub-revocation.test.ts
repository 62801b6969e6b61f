import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor } from '../../support/auth.js';
import { call, connect } from '../../support/hub-client.js';

describe('logout ends realtime access', () => {
  let node: TestNode;
  let aliceId: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    aliceId = await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
  });
  afterAll(async () => node.destroy());

  it("disconnects the session's sockets and refuses its token at the next handshake", async () => {
    const login = await loginFor(node, 'acme', 'alice');
    const other = await loginFor(node, 'acme', 'alice');
    const socket = await connect(node.url!, 'acme', { token: login.accessToken });
    const bystander = await connect(node.url!, 'acme', { token: other.accessToken });
    const dropped = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
    try {
      const out = await node.http.post(`/api/account/${aliceId}/logout`, { tenant: 'acme', token: login.accessToken });
      expect(out.status).toBe(200);
      expect(await dropped).toBe('io server disconnect');
      expect(bystander.connected).toBe(true);
      // The other session keeps its rights on its socket: past the meetings:host check to the event lookup.
      expect(await call(bystander, 'initEvent', { eventId: '0123456789abcdef01234567' })).toMatchObject({
        ok: false,
        error: { code: 'event_not_found' },
      });
      const refused = await connect(node.url!, 'acme', { token: login.accessToken }).then(
        () => 'connected',
        (err: { data?: { code?: string } }) => err.data?.code,
      );
      expect(refused).toBe('session_revoked');
    } finally {
      socket.close();
      bystander.close();
    }
  });

  it('a socket answers for the session of its current token: after a refresh into another session, that one ends it', async () => {
    const first = await loginFor(node, 'acme', 'alice');
    const second = await loginFor(node, 'acme', 'alice');
    const socket = await connect(node.url!, 'acme', { token: first.accessToken });
    // Stays on the first session: its end shows the revocation has reached this node's sockets.
    const witness = await connect(node.url!, 'acme', { token: first.accessToken });
    try {
      expect(await call(socket, 'refreshToken', second.accessToken)).toMatchObject({ ok: true });
      // The session it left ends: the socket, which speaks for the other one now, stays and keeps its rights.
      const witnessGone = new Promise<string>((resolve) => witness.once('disconnect', (reason) => resolve(reason)));
      const out = await node.http.post(`/api/account/${aliceId}/logout`, { tenant: 'acme', token: first.accessToken });
      expect(out.status).toBe(200);
      expect(await witnessGone).toBe('io server disconnect');
      expect(await call(socket, 'initEvent', { eventId: '0123456789abcdef01234567' })).toMatchObject({
        ok: false,
        error: { code: 'event_not_found' },
      });
      expect(socket.connected).toBe(true);
      // The session it refreshed into ends: the socket ends with it.
      const ended = new Promise<unknown>((resolve) => socket.once('sessionEnded', resolve));
      const dropped = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
      const last = await node.http.post(`/api/account/${aliceId}/logout`, {
        tenant: 'acme',
        token: second.accessToken,
      });
      expect(last.status).toBe(200);
      expect(await ended).toMatchObject({ code: 'session_revoked' });
      expect(await dropped).toBe('io server disconnect');
    } finally {
      socket.close();
      witness.close();
    }
  });
});
