import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { shardOf } from '../../../src/actors/runtime/index.js';
import { SnapshotStore } from '../../../src/actors/runtime/snapshot-store.js';
import { ShardLeases } from '../../../src/actors/runtime/shard-leases.js';
import type { DropReason } from '../../../src/actors/runtime/actor-events.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { uniqueId } from '../../support/env.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import { clusterEnv, dropPrefix, startActorNode, type ActorNode } from '../../support/actor-kit.js';

const SHARDS = 8;

/**
 * A node keeps its leases while the rest of its lease timer's work waits for Redis. The timer's tick also
 * wakes every owned shard's durable timers, one Redis read per shard; under a reconnect storm that took
 * longer than a lease, and the renewal queued behind it came too late: the node gave up shards it was
 * serving ("self-fenced") and their actors failed over once more (decision 1146). Here the timer reads
 * are held for several leases: renewals must go on, and no shard may be given up.
 */
describe('lease renewal beside a slow tick', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  let a: ActorNode;
  const dueTimers = SnapshotStore.prototype.dueTimers;
  const renewAll = ShardLeases.prototype.renewAll;

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: `renew-${uniqueId()}` }, counterBehavior());
  });
  afterAll(async () => {
    SnapshotStore.prototype.dueTimers = dueTimers;
    ShardLeases.prototype.renewAll = renewAll;
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await a.node.destroy();
  });

  it('renews every lease while the timers of its shards cannot be read, and gives none up', async () => {
    const to: ActorAddress = { tenant: 't', kind: 'call', id: `renewing-${uniqueId()}` };
    expect((await a.system.ask<CounterState>(to, { op: 'inc', seq: 1 })).count).toBe(1);
    const shard = shardOf(to, SHARDS);
    const epoch = a.system.leases.get(shard)?.epoch;
    expect(epoch).toBeDefined();

    const dropped: [number, DropReason][] = [];
    a.system.events.on('shard-lost', (s, reason) => dropped.push([s, reason]));
    // Every read of due timers from now on waits until the test releases them.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let heldReads = 0;
    SnapshotStore.prototype.dueTimers = async function (this: SnapshotStore, ...args) {
      heldReads++;
      await held;
      return dueTimers.apply(this, args);
    };
    // Five renewals after the first held read: over 1.5 s of 600 ms leases, each renewal 200 ms apart.
    let renewals = 0;
    let enough!: () => void;
    const renewed = new Promise<void>((r) => (enough = r));
    ShardLeases.prototype.renewAll = async function (this: ShardLeases) {
      const lost = await renewAll.apply(this);
      if (heldReads > 0 && ++renewals >= 5) enough();
      return lost;
    };
    try {
      const guard = new Promise<never>((_, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `${renewals} renewals while timer reads were held; shards given up: ${JSON.stringify(dropped)}`,
              ),
            ),
          20_000,
        );
        void renewed.finally(() => clearTimeout(t));
      });
      await Promise.race([renewed, guard]);
      expect(dropped).toEqual([]);
      // Still the owner, under the same epoch: a turn runs here without a failover.
      expect(a.system.leases.get(shard)?.epoch).toBe(epoch);
      expect((await a.system.ask<CounterState>(to, { op: 'inc', seq: 2 })).count).toBe(2);
    } finally {
      release();
      SnapshotStore.prototype.dueTimers = dueTimers;
      ShardLeases.prototype.renewAll = renewAll;
    }
  });
});
