import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { addressKey, shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { uniqueId } from '../../support/env.js';
import {
  addressOwnedBy,
  clusterEnv,
  dropPrefix,
  hardKill,
  nextEvent,
  spawnActorNode,
  startActorNode,
  waitForMembers,
  watchSees,
  type ActorNode,
  type FixtureNode,
} from '../../support/actor-kit.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';

type Reply = CounterState & { epoch: number };
type Freed = { shard: number; ttlMs: number };
const SHARDS = 16;

/**
 * Decision 1116: a node whose process dies is found by its missing Redis connection and evicted; its
 * shards are claimed while its leases (15 s here) still had time to run. An owner evicted while alive
 * (its event loop stalled in a turn) can write nothing afterwards, and the leases of other nodes stay.
 */
describe('eviction of a crashed node before its lease runs out', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS), ACTOR_LEASE_MS: '15000' });
  const keys = actorKeys(`${env.REDIS_PREFIX}actors:`);
  const self = `p-${uniqueId()}`;
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'actor-evict-')), 'claimed');
  const children: FixtureNode[] = [];
  let p: ActorNode;

  beforeAll(async () => {
    p = await startActorNode(
      { ...env, NODE_ID: self },
      counterBehavior({
        onStall: () => {
          const giveUp = Date.now() + 30_000;
          while (!existsSync(marker) && Date.now() < giveUp) {
            // the stall: this process neither renews, heartbeats nor reads its inbox, but its sockets stay open
          }
        },
      }),
    );
  });
  afterAll(async () => {
    for (const c of children) await hardKill(c);
    await dropPrefix(p.node, env.REDIS_PREFIX);
    await p.node.destroy();
  });

  async function spawn(prefix: string): Promise<FixtureNode> {
    const child = await spawnActorNode(env, `${prefix}-${uniqueId()}`);
    children.push(child);
    await waitForMembers(p.system, [self, child.nodeId]);
    return child;
  }

  /** Each shard's lease value, as Redis holds it now. */
  const leaseOf = (to: ActorAddress) => p.node.infra.redis.get(keys.lease(shardOf(to, SHARDS)));

  it('evicts a SIGKILLed owner after two polls and claims its shard while its lease still runs', async () => {
    const child = await spawn('k');
    const nodes = [self, child.nodeId];
    const to = addressOwnedBy(child.nodeId, nodes, SHARDS, 'crash');
    const mine = addressOwnedBy(self, nodes, SHARDS, 'kept');
    expect(shardOf(mine, SHARDS)).not.toBe(shardOf(to, SHARDS));
    await p.system.ask(mine, { op: 'inc' });
    const kept = await leaseOf(mine);
    const acked: Reply[] = [];
    for (let i = 0; i < 5; i++) acked.push(await p.system.ask<Reply>(to, { op: 'inc', seq: i }));
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(child.nodeId);
    await watchSees(p.system, child.nodeId);

    const seen: string[] = [];
    p.system.events.on(
      'unseen',
      (node: string, misses: number) => node === child.nodeId && seen.push(`unseen ${misses}`),
    );
    const evicted = nextEvent(p.system.events, 'evicted', (node) => node === child.nodeId).then(
      (e) => (seen.push('evicted'), e),
    );
    const claimed = nextEvent(p.system.events, 'shard-acquired', (s) => s === shardOf(to, SHARDS)).then(
      (e) => (seen.push('claimed'), e),
    );
    await hardKill(child);
    const [, freed] = await evicted;
    const r = await p.system.ask<Reply>(to, { op: 'get' }, { timeoutMs: 30_000 });
    await claimed;

    expect(seen).toEqual(['unseen 1', 'unseen 2', 'evicted', 'claimed']);
    const lease = freed.find((f) => f.shard === shardOf(to, SHARDS));
    expect(lease?.ttlMs).toBeGreaterThan(0);
    expect(r).toMatchObject({ count: 5, log: [0, 1, 2, 3, 4] });
    expect(r.epoch).toBeGreaterThan(acked[4].epoch);
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(self);
    expect(p.system.membership.nodes()).toEqual([self]);
    // The survivor's own lease was compared and kept.
    expect(freed.map((f) => f.shard)).not.toContain(shardOf(mine, SHARDS));
    expect(await leaseOf(mine)).toBe(kept);
  });

  it('refuses the write of an owner evicted while alive, and keeps the evicting node its own lease', async () => {
    const other = await spawn('e');
    const nodes = [self, other.nodeId];
    const to = addressOwnedBy(self, nodes, SHARDS, 'alive');
    const theirs = addressOwnedBy(other.nodeId, nodes, SHARDS, 'theirs');
    expect(shardOf(theirs, SHARDS)).not.toBe(shardOf(to, SHARDS));
    await p.system.ask(theirs, { op: 'inc' });
    const kept = await leaseOf(theirs);
    for (let i = 0; i < 3; i++) await p.system.ask<Reply>(to, { op: 'inc', seq: i });
    const before = await p.system.ask<Reply>(to, { op: 'get' });
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(self);

    const fenced = nextEvent(p.system.events, 'fenced', (a) => addressKey(a) === addressKey(to));
    const done = other.next<{ freed: Freed[]; epoch: number; node: string }>('evicted');
    // The other node evicts this one (alive, its connections open) while its turn is stalled, takes the
    // shard and counts (acknowledged); the stalled turn's write, made on the older state, is refused and
    // the ask is retried at the new owner, on top of that count.
    const late = p.system.ask<Reply>(to, { op: 'stall', v: 'A-late' });
    other.child.send({ cmd: 'evict', node: self, to, marker });
    const [{ freed, epoch, node }, , applied] = await Promise.all([done, fenced, late]);

    expect(node).toBe(other.nodeId);
    expect(freed.find((f) => f.shard === shardOf(to, SHARDS))?.ttlMs).toBeGreaterThan(0);
    expect(epoch).toBeGreaterThan(before.epoch);
    expect(applied).toMatchObject({ v: 'A-late', count: 4, log: [0, 1, 2, 100], epoch });
    const snap = await p.system.store.load(shardOf(to, SHARDS), addressKey(to));
    expect(snap).toMatchObject({ epoch, state: { v: 'A-late', count: 4, log: [0, 1, 2, 100] } });
    const counted = await p.system.metrics.fencedWrites.get();
    expect(counted.values.reduce((n, v) => n + v.value, 0)).toBe(1);
    // Only the evicted node's lease went: the evicting node's own lease is as it was.
    expect(freed.map((f) => f.shard)).not.toContain(shardOf(theirs, SHARDS));
    expect(await leaseOf(theirs)).toBe(kept);
    expect(await p.system.leases.holder(shardOf(to, SHARDS))).toBe(other.nodeId);
  });
});
