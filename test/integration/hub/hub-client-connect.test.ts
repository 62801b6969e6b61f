import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server } from 'socket.io';
import { HUB_PATH } from '../../../src/hub/hub.server.js';
import { connect } from '../../support/hub-client.js';

/**
 * The tests' hub client never waits forever for a connection: a node that dies or stops after the
 * transport opened but before the hub answered the connection (what the chaos run's SIGKILL and SIGTERM
 * hit under load) made socket.io-client emit only `disconnect`, so `connect` hung and the chaos agents
 * never stopped. A real socket.io server whose middleware never answers stands for that node.
 */
describe('test hub client: connect settles when the hub never answers', () => {
  const server = http.createServer();
  const io = new Server(server, { path: HUB_PATH });
  let url: string;

  beforeAll(async () => {
    // No answer to any connection; the token `close` has the transport closed first, as a dying node does.
    io.use((socket) => {
      if ((socket.handshake.auth as { token?: string }).token === 'close') setTimeout(() => socket.conn.close(), 100);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await io.close();
  });

  /** What `connect` did within `ms`: its rejection's code and the time it took, or 'pending'. */
  async function outcome(p: Promise<unknown>, ms: number): Promise<{ code: string; tookMs: number }> {
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<string>((r) => (timer = setTimeout(() => r('pending'), ms)));
    const code = await Promise.race([
      bound,
      p.then(
        () => 'connected',
        (e: { code?: string }) => String(e.code),
      ),
    ]).finally(() => clearTimeout(timer));
    return { code, tookMs: Date.now() - t0 };
  }

  it('rejects as disconnected when the transport closes before the answer', async () => {
    for (const transport of ['websocket', 'polling', 'default'] as const) {
      const r = await outcome(connect(url, 'acme', { transport, token: 'close', timeoutMs: 30_000 }), 10_000);
      // The close is not waited out to the timeout: it ends the connect at once.
      expect({ transport, code: r.code, fast: r.tookMs < 5_000 }).toEqual({
        transport,
        code: 'disconnected',
        fast: true,
      });
    }
  }, 60_000);

  it('rejects as connect_timeout when the hub keeps the transport open and never answers', async () => {
    const r = await outcome(connect(url, 'acme', { token: 'open', timeoutMs: 1_000 }), 10_000);
    expect(r.code).toBe('connect_timeout');
    expect(r.tookMs).toBeGreaterThanOrEqual(900);
  });
});
