import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket as NetSocket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Server, type Socket } from 'socket.io';
import { io as connect, type Socket as ClientSocket } from 'socket.io-client';
import { coalesceWrites } from '../../../src/hub/write-coalescing.js';

/**
 * Decision 1134: a hub connection's frames of one event-loop turn leave in one write, in the order
 * written. A real Socket.IO server and the official client, over WebSocket and over the default
 * transports (long-polling first, then the upgrade).
 */
let http: HttpServer | undefined;
let server: Server | undefined;
const clients: ClientSocket[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  http = undefined;
});

/** The TCP socket under a Socket.IO connection on the WebSocket transport. */
function tcpOf(socket: Socket): NetSocket {
  const t = socket.conn.transport as unknown as { name: string; socket: { _socket: NetSocket } };
  expect(t.name).toBe('websocket');
  return t.socket._socket;
}

/** Counts the writes handed to the kernel (each `writev` or `write` of the stream) while `fn` runs a turn. */
function countWrites(tcp: NetSocket): { writes: () => number } {
  let writes = 0;
  const s = tcp as unknown as { _writev: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown };
  const writev = s._writev.bind(tcp);
  const write = s._write.bind(tcp);
  s._writev = (...a) => (writes++, writev(...a));
  s._write = (...a) => (writes++, write(...a));
  return { writes: () => writes };
}

async function start(coalesce: boolean): Promise<{ url: string; connected: Promise<Socket> }> {
  http = createServer();
  server = new Server(http, { path: '/hub' });
  if (coalesce) coalesceWrites(server.engine);
  const connected = new Promise<Socket>((resolve) => server!.on('connection', resolve));
  server.on('connection', (socket) => {
    // One turn: a push, the ack, then another push.
    socket.on('burst', (n: number, ack: (r: string) => void) => {
      socket.emit('push', 'before');
      for (let i = 0; i < n; i++) socket.emit('push', `p${i}`);
      ack('ack');
      socket.emit('push', 'after');
    });
  });
  await new Promise<void>((r) => http!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, connected };
}

async function client(url: string, transports?: ['websocket']): Promise<ClientSocket> {
  const c = connect(url, { path: '/hub', ...(transports ? { transports } : {}) });
  clients.push(c);
  await new Promise<void>((resolve, reject) => {
    c.once('connect_error', reject);
    if (transports) c.once('connect', () => resolve());
    // Default transports: long-polling first, so wait for the upgrade to WebSocket.
    else c.io.engine.once('upgrade', () => resolve());
  });
  return c;
}

/** What the client receives for one burst, in arrival order (pushes and the ack). */
async function burst(c: ClientSocket, n: number): Promise<string[]> {
  const seen: string[] = [];
  const done = new Promise<void>((resolve) =>
    c.on('push', (p: string) => {
      seen.push(p);
      if (p === 'after') resolve();
    }),
  );
  c.emit('burst', n, (r: string) => seen.push(r));
  await done;
  c.off('push');
  return seen;
}

describe('hub write coalescing', () => {
  it.each([
    ['websocket only', ['websocket'] as ['websocket']],
    ['default transports, after the upgrade', undefined],
  ])('keeps the order frames were written in (%s)', async (_name, transports) => {
    const { url, connected } = await start(true);
    const c = await client(url, transports);
    await connected;
    expect(await burst(c, 3)).toEqual(['before', 'p0', 'p1', 'p2', 'ack', 'after']);
    expect(await burst(c, 0)).toEqual(['before', 'ack', 'after']);
  });

  it('hands the frames of one turn to the kernel in two writes, and leaves nothing corked', async () => {
    const { url, connected } = await start(true);
    const c = await client(url, ['websocket']);
    const tcp = tcpOf(await connected);
    const counter = countWrites(tcp);
    expect(await burst(c, 5)).toHaveLength(8);
    // 8 frames (7 pushes and the ack): the first, then the 7 engine.io held behind it, in the same turn.
    expect(counter.writes()).toBe(2);
    expect(tcp.writableCorked).toBe(0);
  });

  it("writes a turn's first frame at once and the other connections' frames of the turn in its check phase", async () => {
    const { url } = await start(true);
    const sockets: Socket[] = [];
    server!.on('connection', (s) => sockets.push(s));
    const [a, b] = [await client(url, ['websocket']), await client(url, ['websocket'])];
    const received = Promise.all([a, b].map((c) => new Promise((r) => c.once('push', r))));
    const [tcpA, tcpB] = sockets.map(tcpOf);
    const [countA, countB] = [countWrites(tcpA!), countWrites(tcpB!)];
    // One synchronous turn of the server's loop: a frame to A, then one to B.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        sockets[0]!.emit('push', 'to a');
        expect(countA.writes()).toBe(1);
        sockets[1]!.emit('push', 'to b');
        expect(countB.writes()).toBe(0);
        expect(tcpB!.writableCorked).toBe(1);
        setImmediate(() => {
          expect(countB.writes()).toBe(1);
          expect(tcpB!.writableCorked).toBe(0);
          resolve();
        });
      }),
    );
    expect(await received).toEqual(['to a', 'to b']);
  });

  it('without it, every frame is a write of its own (what the test above would see)', async () => {
    const { url, connected } = await start(false);
    const c = await client(url, ['websocket']);
    const tcp = tcpOf(await connected);
    const counter = countWrites(tcp);
    expect(await burst(c, 5)).toHaveLength(8);
    expect(counter.writes()).toBe(8);
  });
});
