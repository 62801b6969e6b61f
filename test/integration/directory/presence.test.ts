import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { sortKeys } from '../../../src/data/models/user.model.js';

describe('presence across nodes (real Redis and MongoDB)', () => {
  let node: TestNode;
  let userId: string;
  let otherId: string;
  const tenant = 'presco';

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: tenant });
    const { User } = node.infra.mongo.tenantDb(tenant).models;
    const mk = (username: string) =>
      User.create({ username, idpSubject: username, displayName: username, ...sortKeys(username) });
    userId = String((await mk('pres-a'))._id);
    otherId = String((await mk('pres-b'))._id);
  });
  afterAll(async () => node.destroy());

  it('reports the first and last connection across nodes as the only transitions', async () => {
    const p = node.services.presence;
    expect(await p.isOnline(tenant, userId)).toBe(false);
    expect(await p.connected(tenant, userId, 'node-1', 's1')).toBe(true);
    expect(await p.connected(tenant, userId, 'node-2', 's2')).toBe(false);
    expect(await p.connected(tenant, userId, 'node-2', 's2')).toBe(false);
    expect(await p.isOnline(tenant, userId)).toBe(true);
    expect(await p.disconnected(tenant, userId, 'node-1', 's1')).toBe(false);
    expect(await p.isOnline(tenant, userId)).toBe(true);
    expect(await p.disconnected(tenant, userId, 'node-2', 's2')).toBe(true);
    expect(await p.disconnected(tenant, userId, 'node-2', 's2')).toBe(false);
    expect(await p.isOnline(tenant, userId)).toBe(false);
  });

  it('keeps tenants apart and answers many users in one call', async () => {
    const p = node.services.presence;
    await p.connected(tenant, otherId, 'node-1', 's3');
    const online = await p.onlineMany(tenant, [userId, otherId, new Types.ObjectId().toHexString()]);
    expect([...online]).toEqual([otherId]);
    expect(await p.isOnline('someone-else', otherId)).toBe(false);
    expect(await p.disconnected(tenant, otherId, 'node-1', 's3')).toBe(true);
    expect(await p.onlineMany(tenant, [])).toEqual(new Set());
  });

  it('records lastSeen on the user document once the coalesced updates are written', async () => {
    const p = node.services.presence;
    await p.flushLastSeen();
    const before = await p.lastSeen(tenant, userId);
    expect(before).toBeInstanceOf(Date);
    const user = await node.infra.mongo.tenantDb(tenant).models.User.findById(userId).lean();
    expect(user?.lastSeenAt?.getTime()).toBe(before!.getTime());
    expect(await p.lastSeen(tenant, 'not-an-id')).toBeNull();
    expect(await p.lastSeen(tenant, new Types.ObjectId().toHexString())).toBeNull();
  });

  it('sweeps the connections of a node whose heartbeat expired, once', async () => {
    const p = node.services.presence;
    await p.nodeHeartbeat('node-live');
    await p.nodeHeartbeat('node-dead');
    await p.connected(tenant, userId, 'node-dead', 'd1');
    await p.connected(tenant, otherId, 'node-dead', 'd2');
    await p.connected(tenant, otherId, 'node-live', 'l1');
    // The heartbeat key expiring is what a crash looks like; remove it rather than wait for the TTL.
    await node.infra.redis.del(node.infra.keys.nodeAlive('node-dead'));
    const [a, b] = await Promise.all([p.sweepDeadNodes(), p.sweepDeadNodes()]);
    expect([...a, ...b]).toEqual([{ tenant, userId }]);
    expect(await p.isOnline(tenant, userId)).toBe(false);
    expect(await p.isOnline(tenant, otherId)).toBe(true);
    expect(await p.sweepDeadNodes()).toEqual([]);
    expect(await node.infra.redis.sismember(node.infra.keys.presenceNodeIndex, 'node-dead')).toBe(0);
  });
});
