import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server, type Socket } from 'socket.io';
import { HubClient } from '../../../packages/client/src/index.js';

/**
 * The SDK's calls across a lost connection (decision 1167): a call that went out on a connection that
 * closed before its acknowledgement fails at once with `service_unavailable` (it was waiting out its
 * whole timeout, 15 s by default, for an acknowledgement that cannot come); a call made while the
 * connection is down waits in the buffer and is answered on the next one. The server is a scripted
 * Socket.IO server at the hub's path, so it can take a call and lose the connection before answering.
 */
describe('the hub client when its connection is lost during a call', () => {
  const server = http.createServer();
  const io = new Server(server, { path: '/hubs/mobile' });
  let url = '';
  const seen: string[] = [];

  beforeAll(async () => {
    io.on('connection', (socket: Socket) => {
      socket.on('getMeetingDetails', (req: { eventId: string }, ack: (r: unknown) => void) => {
        seen.push(req.eventId);
        // 'lost': the connection goes before the answer (the node died, the network dropped).
        if (req.eventId === 'lost') socket.conn.close();
        else ack({ ok: true, data: { eventId: req.eventId } });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    io.close();
    await new Promise((r) => server.close(r));
  });

  const client = () =>
    new HubClient({
      url,
      token: () => 'token',
      refreshEveryMs: 0,
      // Long enough that a call failed by its timeout is told apart from one failed by the lost connection.
      ackTimeoutMs: 10_000,
      socket: { reconnectionDelay: 50, reconnectionDelayMax: 100 },
    }).connect();
  const nextEvent = (h: HubClient, event: 'connect' | 'disconnect') =>
    new Promise<void>((resolve) => h.socket.once(event, () => resolve()));

  it('fails a call whose connection closed before its acknowledgement with service_unavailable, then calls again once reconnected', async () => {
    const h = await client();
    try {
      const reconnected = nextEvent(h, 'connect');
      await expect(h.call('getMeetingDetails', { eventId: 'lost' })).rejects.toMatchObject({
        code: 'service_unavailable',
        details: { method: 'getMeetingDetails' },
      });
      expect(seen).toContain('lost');
      await reconnected;
      await expect(h.call('getMeetingDetails', { eventId: 'after' })).resolves.toEqual({ eventId: 'after' });
    } finally {
      h.close();
    }
  });

  it('keeps a call made while the connection is down, and has it answered on the next connection', async () => {
    const h = await client();
    try {
      const down = nextEvent(h, 'disconnect');
      const failed = h.call('getMeetingDetails', { eventId: 'lost' }).catch((e: { code: string }) => e.code);
      await down;
      expect(h.socket.connected).toBe(false);
      // Made while disconnected: it waits in Socket.IO's buffer, untouched by the failure of the one before.
      const buffered = h.call('getMeetingDetails', { eventId: 'buffered' });
      expect(await failed).toBe('service_unavailable');
      await expect(buffered).resolves.toEqual({ eventId: 'buffered' });
    } finally {
      h.close();
    }
  });
});
