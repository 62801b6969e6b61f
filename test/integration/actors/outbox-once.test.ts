import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { pushHistoryFor } from '../../../src/realtime/push-history.js';
import { counterBehavior } from '../../support/actor-fixtures/counter.behavior.js';
import { clusterEnv, dropPrefix, nextEvent, startActorNode, type ActorNode } from '../../support/actor-kit.js';

/**
 * A turn's pushes are saved in its actor's outbox and cleared once sent (decision 1129). When the clear
 * has not landed by the time the actor is activated again (its shard moved, or its node died, between
 * the sending and the clear), the next activation sends them again: the recipients' histories record
 * them once, and the repeat carries the position the first sending was given (decision 1133).
 */
describe("a turn's pushes sent again from its outbox", () => {
  const env = clusterEnv();
  let a: ActorNode;
  beforeAll(async () => {
    a = await startActorNode(env, counterBehavior({}));
  });
  afterAll(async () => {
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await a.node.destroy();
  });

  it('are recorded once in the recipient’s history when the sent outbox was still there at the next activation (decision 1133)', async () => {
    const to: ActorAddress = { tenant: 'acme', kind: 'call', id: 'told' };
    const outbox = a.system.keys.outbox(shardOf(to, 16), 'acme/call/told');
    const history = pushHistoryFor(a.node.infra.redis, a.node.infra.keys, a.node.config.hub.history);
    const { position } = await history.read('acme', 'u:pat');
    // The turn's pushes are recorded and sent; its outbox's clear does not land.
    const sent = jest.spyOn(a.system.store, 'sent').mockImplementationOnce(async () => undefined);
    try {
      await a.system.ask(to, { op: 'tell', userId: 'pat', n: 1 });
      expect(sent).toHaveBeenCalledTimes(1);
    } finally {
      sent.mockRestore();
    }
    expect(await a.node.infra.redis.exists(outbox)).toBe(1);
    const gone = nextEvent(a.system.events, 'passivated', (p: ActorAddress) => p.id === 'told');
    await a.system.ask(to, { op: 'passivate' });
    await gone;
    // The next activation sends the outbox it finds before its first turn.
    const info = jest.spyOn(a.system.logger, 'info');
    try {
      await a.system.ask(to, { op: 'tell', userId: 'pat', n: 2 });
      const resent = info.mock.calls.filter((c) => c[1] === "a saved turn's unsent pushes sent");
      expect(resent.map((c) => c[0])).toEqual([expect.objectContaining({ actor: 'acme/call/told', pushes: 1 })]);
    } finally {
      info.mockRestore();
    }
    const r = await history.read('acme', 'u:pat', position);
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.pushes.map((p) => (JSON.parse(p.payload) as { data: unknown }).data)).toEqual([
      { n: 1 },
      { n: 2 },
    ]);
  });
});
