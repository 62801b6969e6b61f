import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { uniqueId } from '../../support/env.js';
import { call, connect, HUB_TRANSPORTS, type HubClient } from '../../support/hub-client.js';
import { freePort } from '../../support/net.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/**
 * A node that stops gracefully (SIGTERM, a rolling upgrade) closes its hub connections so that clients
 * with socket.io-client's default settings reconnect by themselves: the drop must read as a transport
 * close, not as `io server disconnect` (after which socket.io-client never reconnects on its own). The
 * replacement node comes up on the same address, as behind a load balancer, and the same client works on.
 */
describe('hub clients across a graceful node stop', () => {
  const id = uniqueId();
  const shared = {
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ROLES: 'http,hub,actors',
  };
  let port: number;
  let node: TestNode | undefined;
  let token: string;
  let roomId: string;
  const open: HubClient[] = [];

  beforeAll(async () => {
    port = await freePort();
    node = await startTestNode({ ...shared, PORT: String(port) });
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    token = await tokenFor(node, 'acme', 'alice');
    // Her consultation's room: joining it needs meetings:join and membership, what a ping does not prove.
    const now = Date.now();
    const event = await node.services.events.create(await node.services.auth.verifyAccessToken('acme', token), {
      name: 'Clinic',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [],
      attachments: [],
    });
    roomId = String(event._id);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node?.destroy();
  });

  for (const transport of HUB_TRANSPORTS) {
    it(`a ${transport} client sees a transport close, reconnects to the node that replaces it and is served`, async () => {
      const url = `http://127.0.0.1:${port}`;
      const client = await connect(url, 'acme', { token, transport, reconnect: true });
      open.push(client);
      expect(await call(client, 'joinRoom', roomId)).toEqual({ ok: true, data: { roomId } });
      const dropped = new Promise<string>((r) => client.once('disconnect', (reason) => r(reason)));
      await node!.stop();
      node = undefined;
      expect(await dropped).toMatch(/^transport (close|error)$/);
      expect(client.active).toBe(true);
      const back = new Promise<void>((r) => client.once('connect', () => r()));
      node = await startTestNode({ ...shared, PORT: String(port) });
      await back;
      // Served as before: a call its role and membership allow, on the node that replaced the first.
      expect(await call(client, 'joinRoom', roomId)).toEqual({ ok: true, data: { roomId } });
      client.close();
    }, 60_000);
  }
});
