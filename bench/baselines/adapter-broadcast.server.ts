/**
 * Baseline of B4 and B12: a bare Socket.IO server with the Redis adapter. Clients `join` a room; `notify`
 * broadcasts the payload to the room (every node of the same adapter key delivers to its clients);
 * `details` answers an ack.
 * Run two of these with the same `key` for the two-node comparison; `sharded` picks the sharded
 * adapter (Redis 7 sharded pub/sub, dynamic subscriptions), as the product's hub uses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { Redis } from 'ioredis';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { Hosted } from '../harness/host.js';

export async function start(p: { redisUrl: string; key: string; sharded?: boolean }): Promise<Hosted> {
  const pub = new Redis(p.redisUrl);
  const sub = pub.duplicate();
  const server = http.createServer();
  const adapter = p.sharded
    ? createShardedAdapter(pub, sub, { channelPrefix: p.key, subscriptionMode: 'dynamic' })
    : createAdapter(pub, sub, { key: p.key });
  const io = new Server(server, { path: '/socket.io', transports: ['websocket'], adapter });
  io.on('connection', (socket) => {
    socket.on('join', (room: string, ack: (r: unknown) => void) => {
      void socket.join(room);
      ack({ ok: true, data: null });
    });
    socket.on('notify', (room: string, payload: unknown, ack: (r: unknown) => void) => {
      io.to(room).emit('meetingEvent', payload);
      ack({ ok: true, data: null });
    });
    // B12's read beside the pushes (the product's getMeetingDetails): an ack echoing the room.
    socket.on('details', (room: string, ack: (r: unknown) => void) => ack({ ok: true, data: { room } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    info: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/socket.io' },
    async stop() {
      io.close();
      await new Promise((r) => server.close(r));
      pub.disconnect();
      sub.disconnect();
    },
  };
}
