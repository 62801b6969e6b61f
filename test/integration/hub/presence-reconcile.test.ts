import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { connect, recorder, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { HubPresence, type PresencePort } from '../../../src/hub/hub.presence.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';
import type { HubSocket } from '../../../src/hub/hub.types.js';

const T = 'presrec';

/**
 * A disconnect whose presence removal could not be written (Redis unreachable for that moment) left the
 * user listed online for as long as the node lived. Each heartbeat now takes off what Redis lists for the
 * node and the node no longer holds, and announces who went offline; what it holds stays.
 */
describe('hub presence: a lost removal is released at the next heartbeat', () => {
  let node: TestNode;
  let hub: HubRoleHandle;
  let watcher: HubClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    hub = node.roles.get('hub') as HubRoleHandle;
    for (const [username, role] of [
      ['wanda', 'clinician'],
      ['gone', 'clinician'],
      ['kept', 'clinician'],
      ['many', 'clinician'],
    ] as const)
      ids[username] = await createUser(node, T, { username, role });
    watcher = await connect(node.url!, T, { token: await tokenFor(node, T, 'wanda') });
  });
  afterAll(async () => {
    watcher?.close();
    await node.destroy();
  });

  /** A socket as the presence step reads it (its id, tenant and user). */
  const socketOf = (id: string, userId: string) => ({ id, data: { tenant: T, principal: { userId } } }) as HubSocket;

  it('takes off a connection whose removal failed, pushes it offline once, and keeps the held ones', async () => {
    const real = node.services.presence;
    let failRemoval = false;
    // The service as the hub calls it, with one removal failing as it does when Redis cannot be reached.
    const port: PresencePort = {
      connected: (...a) => real.connected(...a),
      disconnected: (...a) =>
        failRemoval ? Promise.reject(new Error('Connection is closed.')) : real.disconnected(...a),
      nodeHeartbeat: (n) => real.nodeHeartbeat(n),
      sweepDeadNodes: () => real.sweepDeadNodes(),
      releaseStale: (n, holds) => real.releaseStale(n, holds),
    };
    const nodeId = `reconcile-${process.pid}`;
    const presence = new HubPresence(hub.io, port, nodeId, node.infra.logger);
    const pushes = recorder(watcher);
    const gone = socketOf('sock-gone', ids.gone!);
    const kept = socketOf('sock-kept', ids.kept!);
    await presence.onConnect(gone);
    await presence.onConnect(kept);
    await pushes.next('userStatus', (p) => p.userId === ids.gone && p.online === true);
    expect(await real.isOnline(T, ids.gone!)).toBe(true);

    failRemoval = true;
    await expect(presence.onDisconnect(gone)).rejects.toThrow('Connection is closed.');
    failRemoval = false;
    // What the failure left: the user online with no connection anywhere.
    expect(await real.isOnline(T, ids.gone!)).toBe(true);

    await presence.tick();
    expect(await real.isOnline(T, ids.gone!)).toBe(false);
    expect(await real.isOnline(T, ids.kept!)).toBe(true);
    expect(await node.infra.redis.smembers(node.infra.keys.presenceNodeConnections(nodeId))).toEqual([
      `${T}|${ids.kept}|sock-kept`,
    ]);
    await pushes.next('userStatus', (p) => p.userId === ids.gone && p.online === false);

    // Nothing more to release: the next heartbeat announces nobody again.
    await presence.tick();
    await presence.onDisconnect(kept);
    await pushes.next('userStatus', (p) => p.userId === ids.kept && p.online === false);
    expect(pushes.of('userStatus').filter((p) => p.userId === ids.gone && p.online === false)).toHaveLength(1);
    expect(await node.infra.redis.exists(node.infra.keys.presenceNodeConnections(nodeId))).toBe(0);
  });

  it("reads a node's list in pages and releases only the connections it does not hold", async () => {
    const p = node.services.presence;
    const nodeId = `pages-${process.pid}`;
    const n = 1_200;
    // One user with many sockets: the user goes offline with the last one released.
    for (let i = 0; i < n; i++) await p.connected(T, ids.many!, nodeId, `s${i}`);
    const holds = (id: string) => Number(id.slice(1)) % 3 === 0;
    expect(await p.releaseStale(nodeId, holds)).toEqual([]);
    expect(await p.connections(T, ids.many!)).toBe(n / 3);
    expect(await node.infra.redis.scard(node.infra.keys.presenceNodeConnections(nodeId))).toBe(n / 3);
    expect(await p.releaseStale(nodeId, () => false)).toEqual([{ tenant: T, userId: ids.many }]);
    expect(await p.isOnline(T, ids.many!)).toBe(false);
  });
});
