import { afterAll, describe, expect, it } from '@jest/globals';
import { shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { counterBehavior } from '../../support/actor-fixtures/counter.behavior.js';
import { clusterEnv, dropPrefix, startActorNode, type ActorNode } from '../../support/actor-kit.js';
import { timerNotes } from '../../support/timer-notes.js';

/** The first `call` actor on `shard` other than `not`. */
function actorOn(shard: number, shards: number, not: string): ActorAddress {
  for (let i = 0; ; i++) {
    const a: ActorAddress = { tenant: 'acme', kind: 'call', id: `on-${shard}-${i}` };
    if (a.id !== not && shardOf(a, shards) === shard) return a;
  }
}

/**
 * A node's stop leaves no timer behind, even when the stop meets a tick that is waking a shard's timers:
 * the tick read the shard's due timers, the stop began (leaving membership, then listing the leases to
 * hand off), and the tick's claim of the shard went out after, won, and was never handed off; the
 * claim then woke every actor of the shard that has a timer, whose timer handles are referenced and
 * kept the process alive after the node stopped (on a loaded machine the hub fuzz's node left 11).
 */
describe('actor system stop: no timer outlives the node', () => {
  const env = clusterEnv({ ACTOR_LEASE_MS: '600' });
  const shards = Number(env.ACTOR_SHARDS);
  const x: ActorAddress = { tenant: 'acme', kind: 'call', id: 'due-soon' };
  const shard = shardOf(x, shards);
  const y = actorOn(shard, shards, x.id);
  let b: ActorNode | undefined;

  afterAll(async () => {
    if (b) {
      await dropPrefix(b.node, env.REDIS_PREFIX).catch(() => undefined);
      await b.node.destroy();
    }
  });

  it('a shard whose timers a tick was waking when the stop began is handed off, its actors timers cleared', async () => {
    // A first node arms x's timer 1.5 s ahead and y's an hour ahead on the same shard, then stops: the
    // timers stay in Redis and the shard is free.
    const a = await startActorNode(env, counterBehavior());
    await a.system.ask(y, { op: 'timer', name: 'later', ms: 3_600_000 });
    await a.system.ask(x, { op: 'timer', name: 'soon', ms: 1_500 });
    await a.node.destroy();

    const notes = timerNotes();
    try {
      b = await startActorNode(env, counterBehavior());
      const { node, system } = b;
      // The stop begins right when a tick has read x's timer as due (the tick then claims the shard);
      // the wakes' own promises say when what the tick started after the stop has run.
      const placement = (
        system as unknown as { placement: { wakeTimers(s: number, until: number | '+inf'): Promise<void> } }
      ).placement;
      const wakeTimers = placement.wakeTimers.bind(placement);
      const wakes: Promise<void>[] = [];
      placement.wakeTimers = (s, until) => {
        const wake = wakeTimers(s, until);
        wakes.push(wake);
        return wake;
      };
      const store = (system as unknown as { store: { dueTimers(s: number, until: number): Promise<string[]> } }).store;
      const dueTimers = store.dueTimers.bind(store);
      let stopped: Promise<void> | undefined;
      let begun!: (stop: Promise<void>) => void;
      // Resolves once the stop that began at that moment has ended.
      const stopEnded = new Promise<void>((r) => (begun = r));
      store.dueTimers = async (s, until) => {
        const keys = await dueTimers(s, until);
        if (s === shard && until < Number.MAX_SAFE_INTEGER && keys.length && !stopped) begun((stopped = system.stop()));
        return keys;
      };
      // The event itself, awaited: a tick that never read the due timer fails the test at jest's limit.
      await stopEnded;
      // Whatever the tick started after the stop has ended: the wake, and the claim the stop waited for.
      await Promise.all(wakes);
      await stopped;
      const held = system.leases.all().map((l) => l.shard);
      await dropPrefix(node, env.REDIS_PREFIX);
      await node.destroy();
      b = undefined;
      // Closes under way end by themselves; y's armed timer would take an hour (the bound only ends that wait).
      expect({ held, pending: await notes.settled(30_000) }).toEqual({ held: [], pending: [] });
    } finally {
      notes.stop();
    }
  });
});
