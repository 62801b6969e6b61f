import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { uniqueId } from '../../support/env.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import {
  clusterEnv,
  dropPrefix,
  nextEvent,
  startActorNode,
  turnGates,
  waitForMembers,
  type ActorNode,
} from '../../support/actor-kit.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 8;

/** Turns of op 'askPeer' with a gated seq number wait until the test opens the gate. */
const { slow, gate } = turnGates(() => Promise.resolve());
const behavior = () => counterBehavior({ slow });

/** Two actors of one shard (a meeting and a headset it asks, say) whose shard `fits`. */
function pairInOneShard(fits: (shard: number) => boolean, shards = SHARDS): [ActorAddress, ActorAddress] {
  const seen = new Map<number, ActorAddress>();
  // Bounded: a condition no shard meets fails the file instead of hanging it at collection.
  for (let i = 0; i < 100_000; i++) {
    const a: ActorAddress = { tenant: 'acme', kind: 'call', id: `peer${i}` };
    const shard = shardOf(a, shards);
    if (!fits(shard)) continue;
    const first = seen.get(shard);
    if (first) return [first, a];
    seen.set(shard, a);
  }
  throw new Error('no two actors in a shard that fits');
}

/**
 * A turn that asks another actor of its own shard while the shard is handed off: the handoff waits for
 * the turn, so the ask must be served by the node that still holds the shard. Held for the next owner
 * (which cannot claim the shard before the turn ends), it waited out its whole deadline and failed the
 * turn with `timeout` (the fleet day's meetings asking their headsets during a rolling restart).
 */
describe('a turn asking an actor of its own shard during the shard handoff', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  const owner = (shard: number, nodes: string[]) => rendezvousOwner(shard, [...nodes].sort());
  const base = uniqueId();
  const ids = { a: `a-${base}`, b: `b-${base}`, c: `c-${base}-0` };
  const moves = (s: number) => owner(s, [ids.a, ids.b]) === ids.b && owner(s, [ids.a, ids.b, ids.c]) === ids.c;
  // A joining node whose arrival moves one of b's shards: with random ids no shard of 8 does so about one
  // time in four ((5/6)^8), so the joining node's id is chosen until one does.
  for (let i = 1; !Array.from({ length: SHARDS }, (_, s) => s).some(moves); i++) ids.c = `c-${base}-${i}`;
  const [x, y] = pairInOneShard(moves);
  const shard = shardOf(x, SHARDS);
  let a: ActorNode;
  let b: ActorNode;
  let c: ActorNode | undefined;

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: ids.a }, behavior());
    b = await startActorNode({ ...env, NODE_ID: ids.b }, behavior());
    await Promise.all([waitForMembers(a.system, [ids.a, ids.b]), waitForMembers(b.system, [ids.a, ids.b])]);
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await Promise.all([a.node.destroy(), b.node.destroy(), c?.node.destroy()]);
  });

  it('is served while the shard moves to a node that joins', async () => {
    const held = await b.system.ask<Reply>(x, { op: 'get' });
    const g = gate(1);
    const turn = b.system.ask<Reply>(x, { op: 'askPeer', seq: 1, to: y }, { timeoutMs: 30_000 });
    await g.entered;
    const started = nextEvent(
      b.system.events,
      'handoff-started',
      (s: number, reason: string) => s === shard && reason === 'rebalance',
    );
    const handedOff = nextEvent(b.system.events, 'handoff', (s: number) => s === shard);
    c = await startActorNode({ ...env, NODE_ID: ids.c }, behavior());
    await started;
    g.open();
    // The turn ends where it began, under the epoch of the node that held the shard: not failed with
    // `timeout` and run again by the next owner.
    expect(await turn).toMatchObject({ log: [1], epoch: held.epoch });
    await handedOff;
    expect(await a.system.ask<Reply>(y, { op: 'get' })).toMatchObject({ count: 1, log: [1] });
    expect(await a.system.ask<Reply>(x, { op: 'get' })).toMatchObject({ log: [1] });
    expect(await c.system.leases.holder(shard)).toBe(ids.c);
  });

  it('is served while the node holding the shard stops', async () => {
    const leaving = c!;
    await waitForMembers(leaving.system, [ids.a, ids.b, ids.c]);
    expect(await leaving.system.leases.holder(shard)).toBe(ids.c);
    const held = await leaving.system.ask<Reply>(x, { op: 'get' });
    const g = gate(2);
    const turn = leaving.system.ask<Reply>(x, { op: 'askPeer', seq: 2, to: y }, { timeoutMs: 30_000 });
    await g.entered;
    const started = nextEvent(leaving.system.events, 'handoff-started', (s: number) => s === shard);
    const stopped = leaving.system.stop();
    await started;
    g.open();
    expect(await turn).toMatchObject({ log: [1, 2], epoch: held.epoch });
    await stopped;
    await leaving.node.destroy();
    c = undefined;
    expect(await a.system.ask<Reply>(y, { op: 'get' })).toMatchObject({ count: 2, log: [1, 2] });
  });
});

/**
 * Two turns asking each other's shards while both shards are handed off (a meeting asking a headset of
 * another shard while a meeting of that shard asks a headset of the first, as a node joins): each
 * handoff waits for its running turn, and each turn's ask waited for the other handoff, so both failed
 * with `timeout` after the whole ask deadline and ran again on the next owner.
 */
describe('turns asking each other moving shards during a rebalance', () => {
  const N = 32;
  const env = clusterEnv({ ACTOR_SHARDS: String(N) });
  const owner = (shard: number, nodes: string[]) => rendezvousOwner(shard, [...nodes].sort());
  const base = uniqueId();
  const ids = { a: `a-${base}`, b: `b-${base}`, c: `c-${base}-0` };
  const moving = () =>
    Array.from({ length: N }, (_, s) => s).filter(
      (s) => owner(s, [ids.a, ids.b]) === ids.b && owner(s, [ids.a, ids.b, ids.c]) === ids.c,
    );
  // A joining node whose arrival moves at least two of b's shards (about five of 32 move, by rendezvous).
  for (let i = 1; moving().length < 2; i++) ids.c = `c-${base}-${i}`;
  const [sx, sy] = moving();
  const [x1, x2] = pairInOneShard((s) => s === sx, N);
  const [y1, y2] = pairInOneShard((s) => s === sy, N);
  const shards = [sx!, sy!];
  let a: ActorNode;
  let b: ActorNode;
  let c: ActorNode | undefined;

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: ids.a }, behavior());
    b = await startActorNode({ ...env, NODE_ID: ids.b }, behavior());
    await Promise.all([waitForMembers(a.system, [ids.a, ids.b]), waitForMembers(b.system, [ids.a, ids.b])]);
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await Promise.all([a.node.destroy(), b.node.destroy(), c?.node.destroy()]);
  });

  it('serves both asks under the leases still held, and both turns end where they began', async () => {
    const held = await Promise.all([b.system.ask<Reply>(x1, { op: 'get' }), b.system.ask<Reply>(y1, { op: 'get' })]);
    const [g1, g2] = [gate(11), gate(12)];
    // x1 (shard X) will ask y2 (shard Y); y1 (shard Y) will ask x2 (shard X).
    const turns = [
      b.system.ask<Reply>(x1, { op: 'askPeer', seq: 11, to: y2 }, { timeoutMs: 30_000 }),
      b.system.ask<Reply>(y1, { op: 'askPeer', seq: 12, to: x2 }, { timeoutMs: 30_000 }),
    ];
    await Promise.all([g1.entered, g2.entered]);
    const started = shards.map((s) =>
      nextEvent(
        b.system.events,
        'handoff-started',
        (shard: number, reason: string) => shard === s && reason === 'rebalance',
      ),
    );
    const handedOff = shards.map((s) => nextEvent(b.system.events, 'handoff', (shard: number) => shard === s));
    c = await startActorNode({ ...env, NODE_ID: ids.c }, behavior());
    await Promise.all(started);
    g1.open();
    g2.open();
    const [rx, ry] = await Promise.all(turns);
    expect(rx).toMatchObject({ log: [11], epoch: held[0]!.epoch });
    expect(ry).toMatchObject({ log: [12], epoch: held[1]!.epoch });
    await Promise.all(handedOff);
    expect(await a.system.ask<Reply>(y2, { op: 'get' })).toMatchObject({ count: 1, log: [11] });
    expect(await a.system.ask<Reply>(x2, { op: 'get' })).toMatchObject({ count: 1, log: [12] });
    expect(await Promise.all(shards.map((s) => c!.system.leases.holder(s)))).toEqual([ids.c, ids.c]);
  });
});
