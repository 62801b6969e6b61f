import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { call, connect, recorder, type HubClient } from '../../support/hub-client.js';
import { createUser, loginFor } from '../../support/auth.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';

const EVENT = '0123456789abcdef01234567';

/**
 * Between a socket's token expiry and the expiry timer dropping it, every call is refused with
 * `token_expired` (only `refreshToken` still answers). There is no knob to delay the timer, and the
 * window is normally a few milliseconds, so the test opens it the only honest way available: it moves
 * the socket's in-memory expiry (what the per-call check reads) into the past on the server while the
 * timer stays armed for the token's real expiry, then calls through a real client.
 */
describe('per-call expiry check on hub sockets', () => {
  let node: TestNode;
  const open: HubClient[] = [];

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    await createUser(node, 'acme', { username: 'mona', role: 'clinician' });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('refuses calls with token_expired once the token has expired, before the socket is dropped, until refreshToken', async () => {
    const login = await loginFor(node, 'acme', 'mona');
    const socket = await connect(node.url!, 'acme', { token: login.accessToken });
    open.push(socket);
    const pushes = recorder(socket);
    expect(await call(socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });

    const io = (node.roles.get('hub') as HubRoleHandle).io;
    const server = io.sockets.sockets.get(socket.id!)!;
    expect(server).toBeDefined();
    server.data.principal = { ...server.data.principal, expiresAt: Date.now() - 1000 };

    expect(await call(socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'token_expired' },
    });
    expect(await call(socket, 'notify', 'x', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'token_expired' },
    });
    expect(socket.connected).toBe(true);
    expect(pushes.of('sessionEnded')).toEqual([]);

    const fresh = await loginFor(node, 'acme', 'mona');
    expect(await call(socket, 'refreshToken', fresh.accessToken)).toMatchObject({ ok: true });
    expect(await call(socket, 'initEvent', { eventId: EVENT })).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });
  });
});
