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
      // The middleware runs on the CONNECT packet, so the transport is open when it closes it.
      if ((socket.handshake.auth as { token?: string }).token === 'close') setImmediate(() => socket.conn.close());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await io.close();
  });

  /**
   * How `connect` settled: its rejection's code. Awaited, not raced against a clock: the code itself says
   * whether the close ended the connect (`disconnected`) or the client's timer did (`connect_timeout`),
   * and a connect that never settles fails the test at jest's time limit (decision 1050).
   */
  const outcome = (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'connected',
      (e: { code?: string }) => String(e.code),
    );

  it('rejects as disconnected when the transport closes before the answer', async () => {
    for (const transport of ['websocket', 'polling', 'default'] as const) {
      // The close is not waited out to the timeout (which would end it as connect_timeout): it ends the connect.
      const code = await outcome(connect(url, 'acme', { transport, token: 'close', timeoutMs: 600_000 }));
      expect({ transport, code }).toEqual({ transport, code: 'disconnected' });
    }
  }, 60_000);

  it('rejects as connect_timeout when the hub keeps the transport open and never answers', async () => {
    expect(await outcome(connect(url, 'acme', { token: 'open', timeoutMs: 1_000 }))).toBe('connect_timeout');
  });
});
