import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { addressKey, shardOf } from '../../../src/actors/runtime/index.js';
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
  type ActorNode,
  type FixtureNode,
} from '../../support/actor-kit.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;

/**
 * The owner's event loop is stalled (a busy loop inside a turn) until another process has taken the
 * shard and written under a newer epoch; the stalled turn's write-through must then be rejected.
 */
describe('fencing a stalled owner', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  const ids = { owner: `o-${uniqueId()}`, other: `n-${uniqueId()}` };
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'actor-fence-')), 'claimed');
  let owner: ActorNode;
  let other: FixtureNode;

  beforeAll(async () => {
    owner = await startActorNode(
      { ...env, NODE_ID: ids.owner },
      counterBehavior({
        onStall: () => {
          const giveUp = Date.now() + 30_000;
          while (!existsSync(marker) && Date.now() < giveUp) {
            // the stall: this process neither renews its leases nor heartbeats
          }
        },
      }),
    );
    other = await spawnActorNode(env, ids.other);
    await waitForMembers(owner.system, [ids.owner, ids.other]);
  });
  afterAll(async () => {
    await hardKill(other);
    await dropPrefix(owner.node, env.REDIS_PREFIX);
    await owner.node.destroy();
  });

  it('rejects and counts the late write of an owner whose lease expired while it was stalled', async () => {
    const to = addressOwnedBy(ids.owner, [ids.owner, ids.other], SHARDS, 'fence');
    const before = await owner.system.ask<Reply>(to, { op: 'inc', seq: 1 });
    const fenced = nextEvent(owner.system.events, 'fenced', (a) => addressKey(a) === addressKey(to));
    const claimed = other.next<{ epoch: number; node: string }>('claimed');
    const stoppedServing = nextEvent(owner.system.events, 'shard-lost', (shard) => shard === shardOf(to, SHARDS));

    const late = owner.system.ask<Reply>(to, { op: 'stall', v: 'A-late' }, { timeoutMs: 200 });
    other.child.send({ cmd: 'claim', to, afterEpoch: before.epoch, marker });
    await expect(late).rejects.toMatchObject({ code: 'timeout' });
    const [{ epoch: newEpoch, node }, , [, reason]] = await Promise.all([claimed, fenced, stoppedServing]);
    expect(reason).toBe('self-fenced');

    expect(node).toBe(ids.other);
    expect(newEpoch).toBeGreaterThan(before.epoch);
    const snap = await owner.system.store.load(shardOf(to, SHARDS), addressKey(to));
    expect(snap).toMatchObject({ epoch: newEpoch, state: { v: 'B', count: 1 } });
    const counted = await owner.system.metrics.fencedWrites.get();
    expect(counted.values.reduce((n, v) => n + v.value, 0)).toBe(1);
    // The lease it held is gone (on a loaded machine the shard may since have come back to it with a new epoch).
    expect(owner.system.leases.get(shardOf(to, SHARDS))?.epoch).not.toBe(before.epoch);
  });
});
