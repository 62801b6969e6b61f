import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { addressKey, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { uniqueId } from '../../support/env.js';
import { counterBehavior, type CounterState } from '../../e2e/actors/fixtures/counter.behavior.js';
import { addressOwnedBy, clusterEnv, dropPrefix, nextEvent, startActorNode, waitForMembers, type ActorNode } from './actor-test-kit.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;

describe('actor runtime across nodes', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  const ids = { a: `a-${uniqueId()}`, b: `b-${uniqueId()}`, c: `c-${uniqueId()}` };
  let a: ActorNode;
  let b: ActorNode;
  let c: ActorNode | undefined;

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: ids.a }, counterBehavior());
    b = await startActorNode({ ...env, NODE_ID: ids.b }, counterBehavior());
    await Promise.all([waitForMembers(a.system, [ids.a, ids.b]), waitForMembers(b.system, [ids.a, ids.b])]);
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await Promise.all([a.node.destroy(), b.node.destroy(), c?.node.destroy()]);
  });

  it('routes an ask to the remote owner and back', async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'remote');
    const activated = nextEvent(b.system.events, 'activated', (p: ActorAddress) => addressKey(p) === addressKey(to));
    const r = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 });
    await activated;
    expect(r.count).toBe(1);
    expect(await b.system.leases.holder(shardOf(to, SHARDS))).toBe(ids.b);
    const routed = await a.system.metrics.routed.get();
    expect(routed.values.find((v) => v.labels.route === 'remote')?.value).toBeGreaterThan(0);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => a.system.ask<Reply>(to, { op: 'inc', seq: i + 2 })));
    expect(replies[19].log).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it('answers a remote turn failure with its code, not a retry', async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'remote-fail');
    await expect(a.system.ask(to, { op: 'fail' })).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('rebalances shards to a node that joins, keeping every actor state', async () => {
    const actors: ActorAddress[] = Array.from({ length: 24 }, (_, i) => ({ tenant: 'acme', kind: 'call', id: `rb${i}` }));
    for (const [i, to] of actors.entries()) await (i % 2 ? a : b).system.ask(to, { op: 'inc', seq: i });
    const all = [ids.a, ids.b, ids.c];
    const moving = new Set(actors.map((to) => shardOf(to, SHARDS)).filter((s) => rendezvousOwner(s, [...all].sort()) === ids.c));
    expect(moving.size).toBeGreaterThan(0);
    const handedOff = new Set<number>();
    const allMoved = new Promise<void>((resolve) => {
      const on = (shard: number, reason: string) => {
        if (reason === 'rebalance' && moving.has(shard)) handedOff.add(shard);
        if (handedOff.size === moving.size) resolve();
      };
      a.system.events.on('handoff', on);
      b.system.events.on('handoff', on);
    });
    c = await startActorNode({ ...env, NODE_ID: ids.c }, counterBehavior());
    await allMoved;
    for (const [i, to] of actors.entries()) {
      const r = await c.system.ask<Reply>(to, { op: 'get' });
      expect(r).toMatchObject({ count: 1, log: [i] });
    }
    for (const s of moving) expect(await c.system.leases.holder(s)).toBe(ids.c);
    const handoffs = (await a.system.metrics.handoffs.get()).values.concat((await b.system.metrics.handoffs.get()).values);
    expect(handoffs.reduce((n, v) => n + v.value, 0)).toBeGreaterThanOrEqual(moving.size);
  });

  it('hands off on graceful stop without losing an acknowledged message', async () => {
    const leaving = c!;
    await waitForMembers(a.system, [ids.a, ids.b, ids.c]);
    const targets = Array.from({ length: 4 }, (_, i) => addressOwnedBy(ids.c, [ids.a, ids.b, ids.c], SHARDS, `stop${i}-`));
    for (const to of targets) await a.system.ask(to, { op: 'get' });
    const sends = targets.flatMap((to) => Array.from({ length: 15 }, (_, i) => a.system.ask<Reply>(to, { op: 'inc', seq: i }, { dedupeId: `${addressKey(to)}#${i}` })));
    const stopped = leaving.node.destroy();
    const results = await Promise.allSettled(sends);
    await stopped;
    c = undefined;
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    for (const to of targets) {
      const r = await b.system.ask<Reply>(to, { op: 'get' });
      expect(r.count).toBe(15);
      expect([...r.log].sort((x, y) => x - y)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      expect(await a.system.leases.holder(shardOf(to, SHARDS))).not.toBe(ids.c);
    }
    const handoffs = await leaving.system.metrics.handoffs.get();
    expect(handoffs.values.find((v) => v.labels.reason === 'stop')?.value).toBeGreaterThan(0);
  });
});
