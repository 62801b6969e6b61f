import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server, type Socket } from 'socket.io';
import { HubClient } from '../../../packages/client/src/index.js';

/**
 * The SDK's rejoin after a reconnection (issue 35 §3): a join refused for a reason that passes is tried
 * again while the connection lasts; a refusal for good is handed to whenRejoined() at once. The server
 * is a scripted Socket.IO server at the hub's path, so each answer is the one the test needs: the
 * refusals a failover produces (`timeout`, `not_owner`) cannot be made to happen on demand in a node.
 */
describe('the hub client joining again after a reconnection', () => {
  const server = http.createServer();
  const io = new Server(server, { path: '/hubs/mobile' });
  let url = '';
  /** Per event id: the answers joinEvent gives after the first (scripted by each test). */
  const script = new Map<string, { code: string }[]>();
  const joins: string[] = [];
  const roomJoins: string[] = [];

  beforeAll(async () => {
    io.on('connection', (socket: Socket) => {
      socket.on('joinEvent', (req: { eventId: string }, ack: (r: unknown) => void) => {
        joins.push(req.eventId);
        const next = script.get(req.eventId)?.shift();
        ack(
          next ? { ok: false, error: { code: next.code, message: `scripted ${next.code}` } } : { ok: true, data: {} },
        );
      });
      socket.on('joinRoom', (roomId: string, ack: (r: unknown) => void) => {
        roomJoins.push(roomId);
        ack(
          roomJoins.length > 1
            ? { ok: false, error: { code: 'forbidden', message: 'not yours' } }
            : { ok: true, data: {} },
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    io.close();
    await new Promise((r) => server.close(r));
  });

  it('tries a join refused with a passing code again, and hands on a refusal for good at once', async () => {
    const h = await new HubClient({
      url,
      token: () => 'token',
      refreshEveryMs: 0,
      socket: { reconnectionDelay: 50, reconnectionDelayMax: 100 },
    }).connect();
    try {
      await h.call('joinEvent', { eventId: 'e1' });
      await h.call('joinRoom', 'r1');
      // After the reconnection: e1's join times out once and is refused by a node that lost it once.
      script.set('e1', [{ code: 'timeout' }, { code: 'not_owner' }]);
      joins.length = 0;
      const rejoined = h.whenRejoined();
      for (const s of io.sockets.sockets.values()) s.conn.close();
      const errors = await rejoined;
      expect(joins).toEqual(['e1', 'e1', 'e1']);
      // The room's refusal (`forbidden`) is not tried again.
      expect(roomJoins).toEqual(['r1', 'r1']);
      expect(errors.map((e) => e.code)).toEqual(['forbidden']);
    } finally {
      h.close();
    }
  });
});
