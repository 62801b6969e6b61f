import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { shardOf } from '../../../src/actors/runtime/index.js';
import { uniqueId } from '../../support/env.js';
import {
  addressOwnedBy,
  clusterEnv,
  dropPrefix,
  hardKill,
  spawnActorNode,
  startActorNode,
  waitForMembers,
  type ActorNode,
  type FixtureNode,
} from '../../support/actor-kit.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import type { PushPublisher } from '../../../src/realtime/push-delivery.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;

describe('failover after a hard kill of the owning process', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  const ids = { parent: `p-${uniqueId()}`, child: `k-${uniqueId()}` };
  let p: ActorNode;
  let child: FixtureNode;
  /** The parent's actors push here (the publisher given to its node at start). */
  let onPush: PushPublisher['emit'] = () => undefined;

  beforeAll(async () => {
    p = await startActorNode({ ...env, NODE_ID: ids.parent }, counterBehavior(), {
      emit: (rooms, event, payload) => onPush(rooms, event, payload),
    });
    child = await spawnActorNode(env, ids.child);
    await waitForMembers(p.system, [ids.parent, ids.child]);
  });
  afterAll(async () => {
    await hardKill(child);
    await dropPrefix(p.node, env.REDIS_PREFIX);
    await p.node.destroy();
  });

  it('re-activates the actor elsewhere with every acknowledged change', async () => {
    const to = addressOwnedBy(ids.child, [ids.parent, ids.child], SHARDS, 'fo');
    const acked: Reply[] = [];
    for (let i = 0; i < 10; i++) acked.push(await p.system.ask<Reply>(to, { op: 'inc', seq: i }));
    acked.push(await child.ask<Reply>(to, { op: 'timer', name: 'after-failover', ms: 1500 }));
    const epochBefore = acked[0].epoch;
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(ids.child);

    const firedAfterFailover = new Promise<void>((resolve) => {
      onPush = (_rooms, event, payload) =>
        void (event === 'sayHi' && (payload as { roomId: string }).roomId === 'after-failover' && resolve());
    });
    await hardKill(child);
    const r = await p.system.ask<Reply>(to, { op: 'get' }, { timeoutMs: 30_000 });
    expect(r.count).toBe(10);
    expect(r.log).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(r.epoch).toBeGreaterThan(epochBefore);
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(ids.parent);

    await firedAfterFailover;
    expect((await p.system.ask<Reply>(to, { op: 'get' })).fired).toEqual(['after-failover']);
  });

  it('answers a retried ask from the remembered reply after failover', async () => {
    const owner = await spawnActorNode(env, `k2-${uniqueId()}`);
    await waitForMembers(p.system, [ids.parent, owner.nodeId]);
    const to = addressOwnedBy(owner.nodeId, [ids.parent, owner.nodeId], SHARDS, 'fo-dedupe');
    const first = await p.system.ask<Reply>(to, { op: 'inc', seq: 7 }, { dedupeId: 'once' });
    await hardKill(owner);
    const retried = await p.system.ask<Reply>(to, { op: 'inc', seq: 7 }, { dedupeId: 'once', timeoutMs: 30_000 });
    expect(retried).toEqual(first);
    expect((await p.system.ask<Reply>(to, { op: 'get' })).count).toBe(1);
  });
});
