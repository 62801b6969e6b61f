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
});
