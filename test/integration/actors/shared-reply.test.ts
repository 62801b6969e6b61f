import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import {
  addressOwnedBy,
  clusterEnv,
  dropPrefix,
  startActorNode,
  waitForMembers,
  type ActorNode,
} from '../../support/actor-kit.js';
import { uniqueId } from '../../support/env.js';

type Reply = CounterState & { epoch: number };
const SHARDS = 16;

/**
 * A turn's reply is copied for its asker unless the asker takes it shared (AskOptions.shareReply: a hub
 * method's acknowledgement, the transport's reply envelope). A shared reply may hold parts of the actor's
 * state; what keeps it safe is that no later turn changes them.
 */
describe("an actor turn's reply, copied or shared", () => {
  const env = clusterEnv({ ACTOR_SHARDS: String(SHARDS) });
  const ids = { a: `a-${uniqueId()}`, b: `b-${uniqueId()}` };
  let a: ActorNode;
  let b: ActorNode;
  const local = (id: string): ActorAddress => addressOwnedBy(ids.a, [ids.a, ids.b], SHARDS, `${id}-`);

  beforeAll(async () => {
    a = await startActorNode({ ...env, NODE_ID: ids.a }, counterBehavior());
    b = await startActorNode({ ...env, NODE_ID: ids.b }, counterBehavior());
    await Promise.all([waitForMembers(a.system, [ids.a, ids.b]), waitForMembers(b.system, [ids.a, ids.b])]);
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await Promise.all([a.node.destroy(), b.node.destroy()]);
  });

  it('copies a read for an asker that did not share it: changing the reply changes no later answer', async () => {
    const to = local('copied');
    await a.system.ask(to, { op: 'inc', seq: 1 });
    const first = await a.system.ask<Reply>(to, { op: 'get' });
    expect(Object.isFrozen(first.log)).toBe(false);
    first.log.push(99);
    first.count = 1000;
    const again = await a.system.ask<Reply>(to, { op: 'get' });
    expect(again).toMatchObject({ count: 1, log: [1] });
  });

  it('hands a read to a sharing asker uncopied: the frozen state itself, which no one can change', async () => {
    const to = local('shared-read');
    await a.system.ask(to, { op: 'inc', seq: 1 });
    const first = await a.system.ask<Reply>(to, { op: 'get' }, { shareReply: true });
    const second = await a.system.ask<Reply>(to, { op: 'get' }, { shareReply: true });
    // Both replies hold the same kept state's array: no copy was made for either.
    expect(second.log).toBe(first.log);
    expect(Object.isFrozen(first.log)).toBe(true);
    expect(() => first.log.push(2)).toThrow(TypeError);
    expect((await a.system.ask<Reply>(to, { op: 'get' })).log).toEqual([1]);
  });

  it("keeps a shared reply of a changing turn as it was: later turns do not change that turn's objects", async () => {
    const to = local('shared-change');
    const r1 = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 }, { shareReply: true });
    const r2 = await a.system.ask<Reply>(to, { op: 'inc', seq: 2 }, { shareReply: true });
    const read = await a.system.ask<Reply>(to, { op: 'get' }, { shareReply: true });
    await a.system.ask<Reply>(to, { op: 'set', v: 'later' }, { shareReply: true });
    expect(r1).toMatchObject({ count: 1, log: [1] });
    expect(r2).toMatchObject({ count: 2, log: [1, 2] });
    expect(read).toMatchObject({ count: 2, log: [1, 2] });
    expect(read.v).toBeUndefined();
  });

  it('answers a remote ask with the same reply (the owner sends it uncopied in its envelope)', async () => {
    const to = addressOwnedBy(ids.b, [ids.a, ids.b], SHARDS, 'remote-');
    await a.system.ask(to, { op: 'inc', seq: 7 });
    const remote = await a.system.ask<Reply>(to, { op: 'get' });
    const atOwner = await b.system.ask<Reply>(to, { op: 'get' });
    expect(remote).toEqual(JSON.parse(JSON.stringify(atOwner)));
    expect(remote).toMatchObject({ count: 1, log: [7] });
    // The asker's reply is its own (parsed from the envelope): changing it changes nothing at the owner.
    remote.log.push(8);
    expect((await b.system.ask<Reply>(to, { op: 'get' })).log).toEqual([7]);
  });
});
