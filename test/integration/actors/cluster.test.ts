import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { addressKey, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { uniqueId } from '../../support/env.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import {
  addressOwnedBy,
  clusterEnv,
  dropPrefix,
  nextEvent,
  startActorNode,
  turnGates,
  waitForMembers,
  type ActorNode,
} from '../../support/actor-kit.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;
/** Turns of op 'slow' with a gated seq number wait until the test opens the gate. */
const timed = turnGates();
const untimed = turnGates(() => Promise.resolve());
function gate(seq: number) {
  const [t, u] = [timed.gate(seq), untimed.gate(seq)];
  return { open: () => (t.open(), u.open()), entered: Promise.race([t.entered, u.entered]) };
}

describe('actor runtime across nodes', () => {
  // Clocks here are one: an ask past its asker's deadline is dropped without allowance (decision 1140).
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS), ACTOR_DEADLINE_SKEW_MS: '0' });
  const ids = { a: `a-${uniqueId()}`, b: `b-${uniqueId()}`, c: `c-${uniqueId()}` };
  let a: ActorNode;
  let b: ActorNode;
  let c: ActorNode | undefined;

  beforeAll(async () => {
    const hooks = { slow: timed.slow };
    a = await startActorNode({ ...env, NODE_ID: ids.a }, counterBehavior(hooks));
    b = await startActorNode({ ...env, NODE_ID: ids.b }, counterBehavior(hooks));
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
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => a.system.ask<Reply>(to, { op: 'inc', seq: i + 2 })),
    );
    expect(replies[19].log).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it("keeps one node's asks to a remote actor in the order sent, across lookups of its owner", async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'ordered');
    await a.system.ask(to, { op: 'get' });
    const asked: Promise<Reply>[] = [];
    let seq = 0;
    const owners = (a.system as unknown as { router: { owners: { forget(shard: number): void } } }).router.owners;
    // Two asks a loop turn; the remembered owner forgotten now and then (as when it lapses after a lease
    // tick): its holder is looked up again while asks keep coming.
    while (seq < 300) {
      if (seq % 50 === 10) owners.forget(shardOf(to, SHARDS));
      asked.push(a.system.ask<Reply>(to, { op: 'inc', seq: seq++ }));
      if (seq % 2 === 0) await new Promise((r) => setImmediate(r));
    }
    const replies = await Promise.all(asked);
    expect(replies.at(-1)!.log).toEqual(Array.from({ length: seq }, (_, i) => i));
  });

  it('answers a remote turn failure with its code, not a retry', async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'remote-fail');
    await expect(a.system.ask(to, { op: 'fail' })).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it("does not run a remote ask whose asker's deadline passed before its turn began (decision 1140)", async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'remote-expired');
    await a.system.ask(to, { op: 'get' });
    const g = gate(7001);
    const slow = a.system.ask<Reply>(to, { op: 'slow', seq: 7001 });
    await g.entered;
    // Sent while the owner's turn holds the mailbox; its attempts and their repeats wait there.
    const deadline = Date.now() + 400;
    await expect(a.system.ask(to, { op: 'inc', seq: 7002 }, { deadline })).rejects.toMatchObject({
      code: 'timeout',
    });
    await new Promise((r) => setTimeout(r, deadline + 20 - Date.now()));
    g.open();
    await slow;
    expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 0, log: [7001] });
    const expired = (await b.system.metrics.expired.get()).values.reduce((n, v) => n + v.value, 0);
    expect(expired).toBe(1);
  });

  it('rebalances shards to a node that joins, keeping every actor state', async () => {
    const all = [ids.a, ids.b, ids.c];
    // 24 actors on 16 shards, and one whose shard the joining node takes for certain: with random node ids
    // alone, about 1 run in 130 moved no shard of theirs to it (seen in a full suite run).
    const actors: ActorAddress[] = [
      ...Array.from({ length: 24 }, (_, i): ActorAddress => ({ tenant: 'acme', kind: 'call', id: `rb${i}` })),
      addressOwnedBy(ids.c, all, SHARDS, 'rb-joining'),
    ];
    for (const [i, to] of actors.entries()) await (i % 2 ? a : b).system.ask(to, { op: 'inc', seq: i });
    const moving = new Set(
      actors.map((to) => shardOf(to, SHARDS)).filter((s) => rendezvousOwner(s, [...all].sort()) === ids.c),
    );
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
    c = await startActorNode({ ...env, NODE_ID: ids.c }, counterBehavior({ slow: untimed.slow }));
    await allMoved;
    for (const [i, to] of actors.entries()) {
      const r = await c.system.ask<Reply>(to, { op: 'get' });
      expect(r).toMatchObject({ count: 1, log: [i] });
    }
    for (const s of moving) expect(await c.system.leases.holder(s)).toBe(ids.c);
    const handoffs = (await a.system.metrics.handoffs.get()).values.concat(
      (await b.system.metrics.handoffs.get()).values,
    );
    expect(handoffs.reduce((n, v) => n + v.value, 0)).toBeGreaterThanOrEqual(moving.size);
  });

  it('hands off on graceful stop: finishes the running turn, forwards the queued ones, loses nothing', async () => {
    const leaving = c!;
    await waitForMembers(a.system, [ids.a, ids.b, ids.c]);
    const targets = Array.from({ length: 4 }, (_, i) =>
      addressOwnedBy(ids.c, [ids.a, ids.b, ids.c], SHARDS, `stop${i}-`),
    );
    for (const to of targets) await a.system.ask(to, { op: 'get' });
    const held = { seq: 1000 };
    const g = gate(held.seq);
    const running = a.system.ask<Reply>(targets[0], { op: 'slow', seq: held.seq }, { dedupeId: 'held-turn' });
    await g.entered;
    const queued = Array.from({ length: 5 }, (_, i) =>
      a.system.ask<Reply>(targets[0], { op: 'inc', seq: i }, { dedupeId: `queued#${i}` }),
    );
    // One more whose asker gives up before the handoff ends: forwarded with its deadline, it is not run.
    const deadline = Date.now() + 150;
    const expired = a.system.ask<Reply>(targets[0], { op: 'inc', seq: 99 }, { dedupeId: 'queued#late', deadline });
    await waitForDepth(leaving, 6);
    const sends = targets
      .slice(1)
      .flatMap((to) =>
        Array.from({ length: 15 }, (_, i) =>
          a.system.ask<Reply>(to, { op: 'inc', seq: i }, { dedupeId: `${addressKey(to)}#${i}` }),
        ),
      );
    const handoffStarted = nextEvent(
      leaving.system.events,
      'handoff-started',
      (shard: number) => shard === shardOf(targets[0], SHARDS),
    );
    const stopped = leaving.system.stop();
    await handoffStarted;
    await expect(expired).rejects.toMatchObject({ code: 'timeout' });
    await new Promise((r) => setTimeout(r, deadline + 20 - Date.now()));
    g.open();
    const results = await Promise.allSettled([running, ...queued, ...sends]);
    await stopped;
    await leaving.node.destroy();
    c = undefined;
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const first = await b.system.ask<Reply>(targets[0], { op: 'get' });
    expect(first.count).toBe(5);
    expect(first.log[0]).toBe(held.seq);
    expect([...first.log.slice(1)].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4]);
    for (const to of targets.slice(1)) {
      const r = await b.system.ask<Reply>(to, { op: 'get' });
      expect(r.count).toBe(15);
      expect([...r.log].sort((x, y) => x - y)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      expect(await a.system.leases.holder(shardOf(to, SHARDS))).not.toBe(ids.c);
    }
    expect(
      (await leaving.system.metrics.handoffs.get()).values.find((v) => v.labels.reason === 'stop')?.value,
    ).toBeGreaterThan(0);
    expect((await leaving.system.metrics.forwarded.get()).values[0]?.value).toBeGreaterThanOrEqual(5);
  });
});

/** Resolves once the node has `n` messages waiting in its mailboxes. */
async function waitForDepth(n: ActorNode, depth: number): Promise<void> {
  while ((await n.system.metrics.mailboxDepth.get()).values[0]?.value !== depth)
    await new Promise((r) => setImmediate(r));
}
