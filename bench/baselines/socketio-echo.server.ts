/**
 * Baseline of B1/B3/B15: a bare Socket.IO server that answers every event with an ack echoing its
 * arguments in the product's ack shape; given `reply` (B1: the product's own answer to the same call,
 * recorded before the rounds), it answers with that instead, so both sides put the same bytes on the
 * wire and their clients decode the same reply (decision 1147). No auth, no adapter, no actors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import type { Hosted } from '../harness/host.js';

export async function start(params: { reply?: unknown } = {}): Promise<Hosted> {
  const { reply } = params;
  const server = http.createServer();
  const io = new Server(server, { path: '/socket.io', transports: ['websocket'] });
  io.on('connection', (socket) => {
    socket.onAny((...args: unknown[]) => {
      const ack = args[args.length - 1];
      if (typeof ack !== 'function') return;
      ack(reply === undefined ? { ok: true, data: args.slice(1, -1)[0] ?? null } : reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    info: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/socket.io' },
    calls: { connections: async () => io.engine.clientsCount },
    async stop() {
      io.close();
      await new Promise((r) => server.close(r));
    },
  };
}
