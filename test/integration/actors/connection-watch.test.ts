import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { shardOf } from '../../../src/actors/runtime/index.js';
import { inboxConnectionName } from '../../../src/actors/runtime/transport.js';
import { uniqueId } from '../../support/env.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import {
  addressOwnedBy,
  clusterEnv,
  dropPrefix,
  killConnection,
  nextEvent,
  startActorNode,
  waitForMembers,
  watchSees,
  type ActorNode,
} from '../../support/actor-kit.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;

/**
 * The connection watch of decision 1116, polled by hand (ACTOR_CONNECTION_POLL_MS=0): a node whose
 * inbox connection drops and comes back between two polls is not evicted, and nothing seen before the
 * watching node's own connection reconnected (as when Redis restarts) counts towards an eviction. The
 * leases are long, so nothing here expires on its own.
 */
describe('connection watch: a dropped connection that comes back is not a crash', () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS), ACTOR_LEASE_MS: '15000', ACTOR_CONNECTION_POLL_MS: '0' });
  const ids = { a: `a-${uniqueId()}`, b: `b-${uniqueId()}` };
  const keys = actorKeys(`${env.REDIS_PREFIX}actors:`);
  let a: ActorNode;
  let b: ActorNode;
  const unseen: [string, number][] = [];
  const evicted: string[] = [];

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: ids.a }, counterBehavior());
    b = await startActorNode({ ...env, NODE_ID: ids.b }, counterBehavior());
    await waitForMembers(b.system, [ids.a, ids.b]);
    b.system.events.on('unseen', (node: string, misses: number) => unseen.push([node, misses]));
    b.system.events.on('evicted', (node: string) => evicted.push(node));
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await Promise.all([a.node.destroy(), b.node.destroy()]);
  });

  /** Closes A's inbox connection; resolves once A saw it close, with a promise of its reconnect. */
  async function dropInbox(): Promise<{ back: Promise<unknown> }> {
    const closed = nextEvent(a.system.events, 'inbox', (s) => s === 'closed');
    const back = nextEvent(a.system.events, 'inbox', (s) => s === 'ready');
    expect(await killConnection(b.node.infra.redis, inboxConnectionName(ids.a))).toBe(1);
    await closed;
    return { back };
  }

  it('misses a connection on one poll, finds it back on the next, and never evicts its node', async () => {
    const to = addressOwnedBy(ids.a, [ids.a, ids.b], SHARDS, 'blip');
    const shard = shardOf(to, SHARDS);
    const before = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 });
    await watchSees(b.system, ids.a);
    unseen.length = 0;
    evicted.length = 0;

    // A stops serving at once when its own inbox connection closes (other nodes may evict it now), and
    // claims nothing until it is back: an ask made on A meanwhile is served once it is.
    const order: string[] = [];
    const onInbox = (state: string) => order.push(`inbox ${state}`);
    const onLost = (s: number, reason: string) => s === shard && order.push(`lost ${reason}`);
    const onAcquired = (s: number) => s === shard && order.push('acquired');
    a.system.events.on('inbox', onInbox).on('shard-lost', onLost).on('shard-acquired', onAcquired);
    let { back } = await dropInbox();
    expect(await b.system.watch.poll()).toEqual([]);
    expect(unseen).toEqual([[ids.a, 1]]);
    const read = a.system.ask<Reply>(to, { op: 'get' });
    await back;
    expect(await read).toMatchObject({ count: 1, log: [1] });
    a.system.events.off('inbox', onInbox).off('shard-lost', onLost).off('shard-acquired', onAcquired);
    expect(order).toEqual(['inbox closed', 'lost disconnected', 'inbox ready', 'acquired']);
    expect(await b.system.watch.poll()).toEqual([]);
    expect(unseen).toEqual([[ids.a, 1]]);

    // Found again, so the next miss is a first one again.
    ({ back } = await dropInbox());
    expect(await b.system.watch.poll()).toEqual([]);
    expect(unseen).toEqual([
      [ids.a, 1],
      [ids.a, 1],
    ]);
    await back;
    expect(await b.system.watch.poll()).toEqual([]);

    expect(evicted).toEqual([]);
    expect(await b.node.infra.redis.zrange(keys.nodes, '0', '-1')).toContain(ids.a);
    expect(await b.system.leases.holder(shard)).toBe(ids.a);
    // A claims its shard again on the next message, with every acknowledged change.
    const after = await b.system.ask<Reply>(to, { op: 'get' });
    expect(after).toMatchObject({ count: 1, log: [1] });
    expect(after.epoch).toBeGreaterThan(before.epoch);
    expect(await b.system.leases.holder(shard)).toBe(ids.a);
  });

  it('counts nothing it saw before its own connection reconnected (as after a Redis restart)', async () => {
    await watchSees(b.system, ids.a);
    unseen.length = 0;
    evicted.length = 0;
    const own = b.node.infra.redis;
    const reconnected = new Promise((r) => own.once('ready', r));
    await a.node.infra.redis.call('CLIENT', 'KILL', 'ID', String(await own.call('CLIENT', 'ID')));
    await reconnected;

    // A's connection is absent at every poll from now on: it was never seen since B reconnected.
    for (let i = 0; i < 3; i++) {
      const { back } = await dropInbox();
      expect(await b.system.watch.poll()).toEqual([]);
      await back;
    }
    expect(unseen).toEqual([]);
    expect(evicted).toEqual([]);
    expect(b.system.watch.sees(ids.a)).toBe(false);

    // Once seen again it is watched again.
    await watchSees(b.system, ids.a);
    const { back } = await dropInbox();
    expect(await b.system.watch.poll()).toEqual([]);
    expect(unseen).toEqual([[ids.a, 1]]);
    await back;
  });
});
