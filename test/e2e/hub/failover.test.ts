import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorSystemOf, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { waitForMembers } from '../../support/actor-kit.js';
import { connect, must, recorder, type HubClient } from '../../support/hub-client.js';

const SHARDS = 16;

describe('hub failover: the node owning a meeting is killed', () => {
  const id = uniqueId();
  const shared = {
    ROLES: 'http,hub,actors',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(SHARDS),
    ACTOR_LEASE_MS: '1500',
  };
  const childId = `hub-child-${id}`;
  let node: TestNode;
  let child: ChildNode;
  const open: HubClient[] = [];
  const users: Record<string, string> = {};

  beforeAll(async () => {
    node = await startTestNode(shared);
    for (const [u, role] of [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
    ] as const)
      users[u] = await createUser(node, 'acme', { username: u, role });
    child = await spawnChildNode(testEnv({ ...shared, NODE_ID: childId, LOG_LEVEL: 'warn' }));
    await waitForMembers(actorSystemOf(node.roles), [node.config.nodeId, childId]);
  }, 90_000);
  afterAll(async () => {
    for (const s of open) s.close();
    if (child) await child.kill();
    await node.destroy();
  });

  /** Creates events until one's meeting actor is placed on the child node. */
  async function eventOwnedByChild(): Promise<string> {
    const host = await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', 'alice'));
    const nodes = [node.config.nodeId, childId].sort();
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const e = await node.services.events.create(host, {
        name: `Failover ${i}`,
        startAt: new Date(now).toISOString(),
        endAt: new Date(now + 3_600_000).toISOString(),
        participants: [{ userId: users.bob!, role: 'participant' }],
        attachments: [],
      });
      const eventId = String(e._id);
      if (rendezvousOwner(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS), nodes) === childId)
        return eventId;
    }
    throw new Error('no event placed on the child');
  }

  it('re-activates the meeting on the surviving node with its state; clients reconnect and carry on', async () => {
    const eventId = await eventOwnedByChild();
    const alice = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    const bob = await connect(child.url, 'acme', { token: await tokenFor(node, 'acme', 'bob') });
    open.push(alice, bob);
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    await must(alice, 'notify', 'before', { eventId });
    const before = await must(alice, 'getMeetingDetails', { eventId });
    const system = actorSystemOf(node.roles);
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(childId);

    const dropped = new Promise((r) => bob.once('disconnect', r));
    await child.kill();
    await dropped;

    const bobAgain = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'bob') });
    open.push(bobAgain);
    const rb = recorder(bobAgain);
    const rejoined = await must(bobAgain, 'joinEvent', { eventId });
    expect(rejoined.meeting.seq).toBe(before.seq);
    expect(rejoined.meeting.members.map((m: { userId: string }) => m.userId).sort()).toEqual(
      [users.alice, users.bob].sort(),
    );
    await must(alice, 'notify', 'after', { eventId });
    expect(await rb.next('meetingEvent', (e) => e.data?.action === 'after')).toMatchObject({
      seq: before.seq + 1,
      type: 'notify',
    });
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(
      node.config.nodeId,
    );
  });
});
