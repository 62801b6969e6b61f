import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { epochFilter, epochStamp, shardOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import { duplicateRedis } from '../../../src/data/redis.js';
import type { PushPublisher } from '../../../src/realtime/push-delivery.js';
import { counterBehavior, type CounterState } from '../../support/actor-fixtures/counter.behavior.js';
import { clusterEnv, dropPrefix, nextEvent, startActorNode, type ActorNode } from '../../support/actor-kit.js';

type Reply = CounterState & { epoch: number };

describe('actor runtime on one node', () => {
  // Every turn that held its mailbox a millisecond is a slow turn here (the log test below).
  const env = clusterEnv({ ACTOR_IDLE_MS: '400', ACTOR_RETIRED_RETENTION_SECONDS: '90', ACTOR_SLOW_TURN_MS: '1' });
  const RETAIN_MS = 90_000;
  const pushes: { rooms: string | string[]; event: string; payload: any }[] = [];
  const publisher: PushPublisher = { emit: (rooms, event, payload) => pushes.push({ rooms, event, payload }) };
  const gates = new Map<number, Promise<void>>();
  let inTurn = 0;
  let maxInTurn = 0;
  const records = new Map<string, { v: string; actorEpoch: number }>();
  let a: ActorNode;
  const addr = (id: string): ActorAddress => ({ tenant: 'acme', kind: 'call', id });

  beforeAll(async () => {
    a = await startActorNode(
      env,
      counterBehavior({
        onTurnStart: () => (maxInTurn = Math.max(maxInTurn, ++inTurn)),
        onTurnEnd: () => inTurn--,
        slow: (seq) => gates.get(seq) ?? new Promise((r) => setTimeout(r, 5)),
        // What outlives a snapshot (decision 1104): actors named `recovered-*` rebuild their state from it.
        recover: async (at) =>
          at.id.startsWith('recovered-') ? { count: 41, log: [], fired: [], v: 'rebuilt' } : undefined,
        record: async (epoch, v) => {
          const coll = a.node.infra.mongo.conn.db!.collection<{ _id: string; v: string; actorEpoch: number }>(
            'actor_fence_test',
          );
          const r = await coll.updateOne({ _id: 'doc', ...epochFilter(epoch) }, { $set: { v, ...epochStamp(epoch) } });
          if (r.matchedCount) records.set('doc', { v, actorEpoch: epoch });
          return r.matchedCount === 1;
        },
      }),
      publisher,
    );
  });
  afterAll(async () => {
    await a.node.infra.mongo.conn
      .db!.collection('actor_fence_test')
      .drop()
      .catch(() => undefined);
    await dropPrefix(a.node, env.REDIS_PREFIX);
    await a.node.destroy();
  });

  it('runs turns one at a time, in arrival order', async () => {
    const to = addr('order');
    await a.system.ask(to, { op: 'get' });
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => a.system.ask<Reply>(to, { op: 'slow', seq: i })),
    );
    expect(replies[29].log).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(maxInTurn).toBe(1);
  });

  it('logs a turn that held its mailbox past ACTOR_SLOW_TURN_MS: actor, message, outcome and what waited behind it', async () => {
    const to = addr('slow-turn');
    await a.system.ask(to, { op: 'get' });
    let release!: () => void;
    gates.set(901, new Promise<void>((r) => (release = r)));
    const warn = jest.spyOn(a.system.logger, 'warn');
    try {
      const held = a.system.ask(to, { op: 'slow', seq: 901, type: 'held' } as never);
      const behind = a.system.ask(to, { op: 'get' });
      // Held for at least a timer's 5 ms (the threshold is 1 ms), with one ask queued behind it.
      await new Promise((r) => setTimeout(r, 5));
      release();
      await Promise.all([held, behind]);
      const logged = warn.mock.calls.filter((c) => c[1] === 'slow actor turn').map((c) => c[0] as any);
      const mine = logged.filter((l) => l.actor.endsWith('/call/slow-turn') && l.message === 'held');
      expect(mine).toEqual([
        expect.objectContaining({ component: 'actors', message: 'held', outcome: 'ok', waiting: 1, nested: false }),
      ]);
      expect(mine[0].ms).toBeGreaterThanOrEqual(1);
    } finally {
      warn.mockRestore();
      gates.delete(901);
    }
  });

  it('answers a turn that pushed only after its pushes were recorded (an acknowledged push is in the histories)', async () => {
    const events: string[] = [];
    publisher.idle = async () => {
      // A real round trip stands for the history's Redis writes.
      await a.node.infra.redis.ping();
      events.push('recorded');
    };
    try {
      await a.system.ask(addr('recorded'), { op: 'fire', name: 'r1' });
      events.push('answered');
      expect(events).toEqual(['recorded', 'answered']);
      // A turn that pushed nothing does not wait for the publisher.
      await a.system.ask(addr('recorded'), { op: 'get' });
      expect(events).toEqual(['recorded', 'answered']);
    } finally {
      delete publisher.idle;
      // The other tests read the pushes they caused: this one's leave the shared list.
      pushes.splice(0, pushes.length, ...pushes.filter((p) => p.rooms !== 'room:recorded'));
    }
  });

  it('rolls a failed turn back and answers with its error code', async () => {
    const to = addr('fails');
    await a.system.ask(to, { op: 'inc' });
    await expect(a.system.ask(to, { op: 'fail' })).rejects.toMatchObject({ code: 'invalid_state' });
    expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(1);
  });

  it('fires timers as turns and pushes only after the turn persisted', async () => {
    const to = addr('timer');
    const fired = new Promise<void>((resolve) => {
      const orig = publisher.emit;
      publisher.emit = (rooms, event, payload) => {
        orig(rooms, event, payload);
        if (event === 'sayHi') resolve();
      };
    });
    await a.system.ask(to, { op: 'timer', name: 't1', ms: 30 });
    await fired;
    const snap = await a.system.store.load(shardOf(to, 16), 'acme/call/timer');
    expect(snap?.state).toMatchObject({ fired: ['t1'] });
    expect(snap?.timers).toEqual([]);
    expect(pushes.find((p) => p.event === 'sayHi')).toMatchObject({ rooms: 'room:timer', payload: { roomId: 't1' } });
  });

  it('passivates on request and reactivates from the snapshot', async () => {
    const to = addr('passive');
    for (let i = 0; i < 3; i++) await a.system.ask(to, { op: 'inc', seq: i });
    const gone = nextEvent(
      a.system.events,
      'passivated',
      (p: ActorAddress, reason: string) => p.id === 'passive' && reason === 'requested',
    );
    await a.system.ask(to, { op: 'passivate' });
    await gone;
    const back = nextEvent(a.system.events, 'activated', (p: ActorAddress) => p.id === 'passive');
    const r = await a.system.ask<Reply>(to, { op: 'get' });
    await back;
    expect(r).toMatchObject({ count: 3, log: [0, 1, 2] });
  });

  it("sends a saved turn's pushes its node never sent at the actor's next activation, before any turn (decision 1129)", async () => {
    const to = addr('outbox');
    const mine = () => pushes.filter((p) => p.rooms === 'room:outbox').map((p) => p.payload.roomId);
    await a.system.ask(to, { op: 'get' });
    // The node dies after the turn's save and before its pushes were sent: the asker never hears back.
    const send = publisher.emit;
    publisher.emit = () => {
      throw new Error('the node died between the save and the sending');
    };
    try {
      await expect(a.system.ask(to, { op: 'fire', name: 'o1' }, { dedupeId: 'fire-o1' })).rejects.toThrow(/died/);
    } finally {
      publisher.emit = send;
    }
    expect(mine()).toEqual([]);
    // The actor is activated again (the next owner, or this node after the activation went).
    const gone = nextEvent(a.system.events, 'passivated', (p: ActorAddress) => p.id === 'outbox');
    await a.system.ask(to, { op: 'passivate' });
    await gone;
    // The asker's retry is answered from the remembered reply; the push was sent first, once.
    const r = await a.system.ask<Reply>(to, { op: 'fire', name: 'o1' }, { dedupeId: 'fire-o1' });
    expect(r.fired).toEqual(['o1']);
    expect(mine()).toEqual(['o1']);
    // Sent and forgotten: a later activation sends nothing again.
    await a.system.ask(to, { op: 'passivate' });
    await a.system.ask(to, { op: 'get' });
    expect(mine()).toEqual(['o1']);
    expect(await a.node.infra.redis.exists(a.system.keys.outbox(shardOf(to, 16), 'acme/call/outbox'))).toBe(0);
  });

  it('clears the outbox it sent even when its shard moved meanwhile, so no next owner sends it again', async () => {
    const to = addr('outbox-moved');
    const shard = shardOf(to, 16);
    const outbox = a.system.keys.outbox(shard, 'acme/call/outbox-moved');
    const epochKey = a.system.keys.epoch(shard);
    const mine = () => pushes.filter((p) => p.rooms === 'room:outbox-moved').map((p) => p.payload.roomId);
    // Loads the clearing script, so the turn's clear below is one command on the store's connection.
    await a.system.store.sent(shard, 'acme/call/outbox-warm', 'nothing');
    await a.system.ask(to, { op: 'get' });
    let recorded!: () => void;
    const idle = new Promise<void>((r) => (recorded = r));
    publisher.idle = () => idle;
    const epoch = await a.node.infra.redis.get(epochKey);
    try {
      const fired = a.system.ask<Reply>(to, { op: 'fire', name: 'm1' });
      // Saved, pushes sent and being recorded: meanwhile the shard gets a newer owner (a newer epoch).
      while (!mine().length) await new Promise((r) => setImmediate(r));
      expect(await a.node.infra.redis.exists(outbox)).toBe(1);
      await a.node.infra.redis.set(epochKey, String(Number(epoch) + 1_000));
      recorded();
      expect((await fired).fired).toEqual(['m1']);
      // After the turn's clear on the same connection.
      await a.system.store.sent(shard, 'acme/call/outbox-warm', 'nothing');
      expect(await a.node.infra.redis.exists(outbox)).toBe(0);
    } finally {
      delete publisher.idle;
      await a.node.infra.redis.set(epochKey, epoch!);
    }
    expect(mine()).toEqual(['m1']);
  });

  it('forgets the snapshot when passivated with forget', async () => {
    const to = addr('forget');
    await a.system.ask(to, { op: 'inc' });
    await a.system.ask(to, { op: 'passivate', forget: true });
    expect(await a.system.store.load(shardOf(to, 16), 'acme/call/forget')).toBeUndefined();
    expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(0);
  });

  it('writes a retired snapshot with an expiry, and a later change writes it without one', async () => {
    const redis = a.node.infra.redis;
    const snapKey = (to: ActorAddress) => a.system.keys.snapshot(shardOf(to, 16), `acme/call/${to.id}`);
    const indexed = async (to: ActorAddress) =>
      (await redis.zscore(a.system.keys.timers(shardOf(to, 16)), `acme/call/${to.id}`)) !== null;

    // Retired with a timer pending: the snapshot outlives the timer by the retention; the timer stays indexed.
    const waiting = addr('retired-timer');
    await a.system.ask(waiting, { op: 'timer', name: 'later', ms: 3_600_000 });
    expect(await redis.pttl(snapKey(waiting))).toBe(-1);
    await a.system.ask(waiting, { op: 'retire' });
    const withTimer = await redis.pttl(snapKey(waiting));
    expect(withTimer).toBeGreaterThan(RETAIN_MS);
    expect(withTimer).toBeLessThanOrEqual(3_600_000 + RETAIN_MS);
    expect(await indexed(waiting)).toBe(true);

    // No timer: the configured retention (or the turn's own), written even though the turn changed nothing.
    const to = addr('retired');
    await a.system.ask(to, { op: 'inc' });
    expect(await redis.pttl(snapKey(to))).toBe(-1);
    await a.system.ask(to, { op: 'retire' });
    const retired = await redis.pttl(snapKey(to));
    expect(retired).toBeGreaterThan(0);
    expect(retired).toBeLessThanOrEqual(RETAIN_MS);
    expect(await indexed(to)).toBe(false);
    await a.system.ask(to, { op: 'retire', ms: 5_000 });
    expect(await redis.pttl(snapKey(to))).toBeLessThanOrEqual(5_000);
    await expect(a.system.ask(to, { op: 'retire', ms: 0 })).rejects.toMatchObject({ code: 'bad_request' });
    expect(await redis.pttl(snapKey(to))).toBeLessThanOrEqual(5_000);

    // A turn that changes nothing keeps the expiry; one that changes the state again revives the snapshot.
    await a.system.ask(to, { op: 'get' });
    expect(await redis.pttl(snapKey(to))).toBeGreaterThan(0);
    expect((await a.system.ask<Reply>(to, { op: 'inc' })).count).toBe(2);
    expect(await redis.pttl(snapKey(to))).toBe(-1);
    expect((await a.system.store.load(shardOf(to, 16), 'acme/call/retired'))?.state).toMatchObject({ count: 2 });
  });

  it('starts an actor without a snapshot from what its behaviour recovers, written only by a turn that changes it', async () => {
    const to = addr('recovered-1');
    const snapKey = a.system.keys.snapshot(shardOf(to, 16), 'acme/call/recovered-1');
    expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 41, v: 'rebuilt' });
    // A turn that changes nothing (a failed one included) writes nothing: the rebuilt state is not a snapshot.
    await a.system.ask(to, { op: 'passivate' });
    await expect(a.system.ask(to, { op: 'fail' })).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await a.node.infra.redis.exists(snapKey)).toBe(0);
    expect(await a.system.ask<Reply>(to, { op: 'inc' })).toMatchObject({ count: 42, v: 'rebuilt' });
    expect((await a.system.store.load(shardOf(to, 16), 'acme/call/recovered-1'))?.state).toMatchObject({ count: 42 });
    // With a snapshot, nothing is rebuilt: the snapshot is the state.
    await a.system.ask(to, { op: 'passivate' });
    expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 42 });
  });

  it('passivates idle actors, and a timer wakes a passivated actor', async () => {
    const to = addr('sleeper');
    const idle = nextEvent(
      a.system.events,
      'passivated',
      (p: ActorAddress, reason: string) => p.id === 'sleeper' && reason === 'idle',
    );
    const fired = new Promise<void>((resolve) => {
      const orig = publisher.emit;
      publisher.emit = (rooms, event, payload) => {
        orig(rooms, event, payload);
        if (event === 'sayHi' && (payload as { roomId: string }).roomId === 'wake') resolve();
      };
    });
    await a.system.ask(to, { op: 'timer', name: 'wake', ms: 900 });
    await idle;
    const woke = nextEvent(a.system.events, 'activated', (p: ActorAddress) => p.id === 'sleeper');
    await woke;
    await fired;
    expect((await a.system.ask<Reply>(to, { op: 'get' })).fired).toEqual(['wake']);
  });

  it('counts an idle period from the last turn: an actor asked every 100 ms stays active, and goes idle after its last turn', async () => {
    const to = addr('kept-busy');
    const passivations: string[] = [];
    const onPassivated = (p: ActorAddress, reason: string) => {
      if (p.id === 'kept-busy') passivations.push(reason);
    };
    a.system.events.on('passivated', onPassivated);
    try {
      const idle = nextEvent(a.system.events, 'passivated', (p: ActorAddress) => p.id === 'kept-busy');
      // Twice ACTOR_IDLE_MS (400 ms) of turns: one activation throughout (a timer set at the first turn
      // would have deactivated it in the middle; the first timer finds turns since, and waits the rest).
      for (let i = 1; i <= 8; i++) {
        expect((await a.system.ask<Reply>(to, { op: 'inc', seq: i })).count).toBe(i);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(passivations).toEqual([]);
      await idle;
      expect(passivations).toEqual(['idle']);
      expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(8);
    } finally {
      a.system.events.off('passivated', onPassivated);
    }
  });

  it('applies a retried ask with the same de-duplication id once, also after reactivation', async () => {
    const to = addr('dedupe');
    const first = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 }, { dedupeId: 'req-1' });
    const again = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 }, { dedupeId: 'req-1' });
    expect(again).toEqual(first);
    await a.system.ask(to, { op: 'passivate' });
    const afterReactivation = await a.system.ask<Reply>(to, { op: 'inc', seq: 1 }, { dedupeId: 'req-1' });
    expect(afterReactivation.count).toBe(1);
    expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(1);
    const hits = await a.system.metrics.dedupeHits.get();
    expect(hits.values.reduce((n, v) => n + v.value, 0)).toBeGreaterThanOrEqual(2);
  });

  it('answers a repeat of an ask still queued or in its turn with it, ahead of what was queued in between', async () => {
    const to = addr('repeat-joins');
    await a.system.ask(to, { op: 'get' });
    let release!: () => void;
    gates.set(1101, new Promise<void>((r) => (release = r)));
    const answered: string[] = [];
    const track = <T>(name: string, p: Promise<T>) =>
      p.then((v) => {
        answered.push(name);
        return v;
      });
    const hitsBefore = (await a.system.metrics.dedupeHits.get()).values.reduce((n, v) => n + v.value, 0);
    // The first delivery holds the mailbox; an ask queues behind it; a sender whose attempt ran out re-sends.
    const original = track('original', a.system.ask<Reply>(to, { op: 'slow', seq: 1101 }, { dedupeId: 'rj-1' }));
    const between = track('between', a.system.ask<Reply>(to, { op: 'slow', seq: 1102 }));
    const repeat = track('repeat', a.system.ask<Reply>(to, { op: 'slow', seq: 1101 }, { dedupeId: 'rj-1' }));
    release();
    const [o, , r] = await Promise.all([original, between, repeat]);
    expect(answered).toEqual(['original', 'repeat', 'between']);
    expect(r).toEqual(o);
    expect(r).not.toBe(o);
    expect(r.log).toEqual([1101]);
    expect((await a.system.ask<Reply>(to, { op: 'get' })).log).toEqual([1101, 1102]);
    const hitsAfter = (await a.system.metrics.dedupeHits.get()).values.reduce((n, v) => n + v.value, 0);
    expect(hitsAfter - hitsBefore).toBe(1);
  });

  it('remembers no reply for an ask answered in process, and remembers one whose asker gave up while it waited', async () => {
    const dedupeKeys = async (id: string) =>
      (await a.node.infra.redis.keys(`${env.REDIS_PREFIX}*dedupe:*${id}*`)).length;
    const to = addr('direct');
    await a.system.ask(to, { op: 'inc' });
    await a.system.ask(to, { op: 'get' });
    expect(await dedupeKeys('direct')).toBe(0);

    // The turn began before its asker's deadline and ends after it: it finishes, and its reply is kept
    // for a retry of the same id.
    const held = addr('abandoned');
    await a.system.ask(held, { op: 'get' });
    let release!: () => void;
    gates.set(1001, new Promise<void>((r) => (release = r)));
    const gaveUp = a.system.ask(held, { op: 'slow', seq: 1001 }, { timeoutMs: 100 });
    await expect(gaveUp).rejects.toMatchObject({ code: 'timeout' });
    release();
    const after = await a.system.ask<Reply>(held, { op: 'get' });
    expect(after).toMatchObject({ log: [1001] });
    expect(await dedupeKeys('abandoned')).toBe(1);
  });

  describe("an ask's deadline (decision 1140)", () => {
    const expiredCount = async () => (await a.system.metrics.expired.get()).values.reduce((n, v) => n + v.value, 0);

    it('does not run an ask whose asker gave up while it waited in the mailbox, and counts it', async () => {
      const to = addr('expired');
      await a.system.ask(to, { op: 'get' });
      let release!: () => void;
      gates.set(1201, new Promise<void>((r) => (release = r)));
      const before = await expiredCount();
      const slow = a.system.ask<Reply>(to, { op: 'slow', seq: 1201 });
      const late = a.system.ask(to, { op: 'inc', seq: 1202 }, { timeoutMs: 100 });
      await expect(late).rejects.toMatchObject({ code: 'timeout' });
      release();
      await slow;
      expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 0, log: [1201] });
      expect((await expiredCount()) - before).toBe(1);
    });

    it('does not run an ask whose turn would begin in the very millisecond its asker gave up', async () => {
      // The asker gives up once Date.now() reaches its deadline; a turn beginning at that same
      // millisecond must not run either (seen in CI: the release and the turn within one millisecond).
      const to = addr('expired-at-deadline');
      await a.system.ask(to, { op: 'get' });
      let release!: () => void;
      gates.set(1301, new Promise<void>((r) => (release = r)));
      const slow = a.system.ask<Reply>(to, { op: 'slow', seq: 1301 });
      const t = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(t);
      try {
        // Deadline t + 100; the clock stands still until the asker's attempt timers have run out, then
        // reads exactly the deadline while the turn is taken from the mailbox.
        const late = a.system.ask(to, { op: 'inc', seq: 1302 }, { timeoutMs: 100 });
        const gaveUp = expect(late).rejects.toMatchObject({ code: 'timeout' });
        await new Promise((r) => setTimeout(r, 150));
        clock.mockReturnValue(t + 100);
        await gaveUp;
        release();
        await slow;
      } finally {
        clock.mockRestore();
      }
      expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 0, log: [1301] });
    });

    it('runs a queued ask once a repeat of its id whose asker still waits joined it', async () => {
      const to = addr('expired-joined');
      await a.system.ask(to, { op: 'get' });
      let release!: () => void;
      gates.set(1301, new Promise<void>((r) => (release = r)));
      const before = await expiredCount();
      const slow = a.system.ask<Reply>(to, { op: 'slow', seq: 1301 });
      const first = a.system.ask(to, { op: 'inc', seq: 1302 }, { timeoutMs: 100, dedupeId: 'ej-1' });
      // A new call of the same request (a client re-sent its id): it still waits when the first gave up.
      const repeat = a.system.ask<Reply>(to, { op: 'inc', seq: 1302 }, { dedupeId: 'ej-1' });
      await expect(first).rejects.toMatchObject({ code: 'timeout' });
      release();
      await slow;
      expect(await repeat).toMatchObject({ count: 1, log: [1301, 1302] });
      // Run as the delivery both joined, not dropped and sent again by the repeat's retry.
      expect((await expiredCount()) - before).toBe(0);
    });

    it('keeps the deadline of a delivery re-sent after its actor was deactivated', async () => {
      const to = addr('expired-requeued');
      await a.system.ask(to, { op: 'get' });
      let release!: () => void;
      gates.set(1401, new Promise<void>((r) => (release = r)));
      const before = await expiredCount();
      // The turn ahead passivates the actor: what waits behind it is delivered again to a new activation.
      const slow = a.system.ask<Reply>(to, { op: 'slow', seq: 1401 });
      const passivate = a.system.ask(to, { op: 'passivate' });
      const late = a.system.ask(to, { op: 'inc', seq: 1402 }, { timeoutMs: 100 });
      await expect(late).rejects.toMatchObject({ code: 'timeout' });
      release();
      await Promise.all([slow, passivate]);
      expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 0, log: [1401] });
      expect((await expiredCount()) - before).toBe(1);
    });
  });

  it("fences durable writes made on the actor's behalf by epoch", async () => {
    const to = addr('fenced');
    const coll = a.node.infra.mongo.conn.db!.collection<{ _id: string; v: string; actorEpoch?: number }>(
      'actor_fence_test',
    );
    await coll.insertOne({ _id: 'doc', v: 'initial' });
    const r = await a.system.ask<Reply>(to, { op: 'record', v: 'first' });
    expect(records.get('doc')).toEqual({ v: 'first', actorEpoch: r.epoch });
    await coll.updateOne({ _id: 'doc' }, { $set: { actorEpoch: r.epoch + 1, v: 'newer owner' } });
    const fenced = nextEvent(a.system.events, 'fenced');
    const lost = nextEvent(a.system.events, 'shard-lost', (_s: number, reason: string) => reason === 'fenced');
    const retried = await a.system.ask<Reply>(to, { op: 'record', v: 'retried' });
    await Promise.all([fenced, lost]);
    expect(retried.epoch).toBeGreaterThanOrEqual(r.epoch + 1);
    expect(await coll.findOne({ _id: 'doc' })).toMatchObject({ v: 'retried', actorEpoch: retried.epoch });
  });

  it('rejects a snapshot write from a stale epoch in Redis and counts it', async () => {
    const to = addr('stale');
    const r = await a.system.ask<Reply>(to, { op: 'inc' });
    const shard = shardOf(to, 16);
    const stale = { shard, epoch: r.epoch - 1, value: `${a.system.nodeId}|${r.epoch - 1}` };
    expect(
      await a.system.store.saveTurn(stale, 'acme/call/stale', {
        mode: 'set',
        snapshot: { state: { count: 99 }, timers: [], epoch: r.epoch - 1 },
      }),
    ).toBe(false);
    const current = a.system.leases.get(shard)!;
    expect(await a.system.store.saveTurn(current, 'acme/call/stale', { mode: 'none' })).toBe(true);
    expect((await a.system.store.load(shard, 'acme/call/stale'))?.state).toMatchObject({ count: 1 });
  });

  describe('read-only turns (decision 1120)', () => {
    const snapshotOf = async (to: ActorAddress) => a.system.store.load(shardOf(to, 16), `acme/call/${to.id}`);

    it('refuses an in-place change under a read-only message: memory and Redis keep the state as it was', async () => {
      const to = addr('sneak');
      await a.system.ask(to, { op: 'inc' });
      await expect(a.system.ask(to, { op: 'sneak' })).rejects.toMatchObject({ code: 'internal' });
      expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(1);
      expect((await snapshotOf(to))?.state).toMatchObject({ count: 1 });
      // The next change starts from that state, and persists.
      expect((await a.system.ask<Reply>(to, { op: 'inc' })).count).toBe(2);
      expect((await snapshotOf(to))?.state).toMatchObject({ count: 2 });
    });

    it('persists a state replaced or a timer set under a read-only message', async () => {
      const to = addr('swap');
      await a.system.ask(to, { op: 'inc' });
      expect(await a.system.ask<Reply>(to, { op: 'swap', v: 'swapped' })).toMatchObject({ count: 1, v: 'swapped' });
      expect((await snapshotOf(to))?.state).toMatchObject({ count: 1, v: 'swapped' });
      await a.system.ask(to, { op: 'remind', name: 'later', ms: 3_600_000 });
      expect((await snapshotOf(to))?.timers).toEqual([expect.objectContaining({ name: 'later' })]);
      // Both survive a reactivation (what Redis holds is what the warm actor had).
      await a.system.ask(to, { op: 'passivate' });
      expect(await a.system.ask<Reply>(to, { op: 'get' })).toMatchObject({ count: 1, v: 'swapped' });
    });

    it('starts each change from the state the previous turns left, reads in between', async () => {
      const to = addr('settled');
      await a.system.ask(to, { op: 'inc', seq: 1 });
      await a.system.ask(to, { op: 'get' });
      await a.system.ask(to, { op: 'set', v: 'one' });
      await a.system.ask(to, { op: 'get' });
      expect(await a.system.ask<Reply>(to, { op: 'inc', seq: 2 })).toMatchObject({ count: 2, log: [1, 2], v: 'one' });
      expect((await snapshotOf(to))?.state).toMatchObject({ count: 2, log: [1, 2], v: 'one' });
    });

    it("hands the asker a copy of what the turn answered, never the actor's frozen state", async () => {
      const to = addr('reply-copy');
      await a.system.ask(to, { op: 'inc', seq: 1 });
      const r = await a.system.ask<Reply>(to, { op: 'get' });
      r.log.push(99);
      expect((await a.system.ask<Reply>(to, { op: 'get' })).log).toEqual([1]);
    });

    it('runs a retried read again and remembers no reply for a read (decision 1131)', async () => {
      const to = addr('read-dedupe');
      const dedupeKeys = async () => (await a.node.infra.redis.keys(`${env.REDIS_PREFIX}*dedupe:*read-dedupe*`)).length;
      await a.system.ask(to, { op: 'inc' }, { dedupeId: 'inc-1' });
      expect(await dedupeKeys()).toBe(1);
      const first = await a.system.ask<Reply>(to, { op: 'get' }, { dedupeId: 'read-1' });
      expect(first.count).toBe(1);
      expect(await dedupeKeys()).toBe(1);
      await a.system.ask(to, { op: 'inc' });
      // The repeat reads the state as it is now: a read changes nothing, so running it again is safe.
      expect((await a.system.ask<Reply>(to, { op: 'get' }, { dedupeId: 'read-1' })).count).toBe(2);
      expect(await dedupeKeys()).toBe(1);
      // A change's repeat is still answered from its remembered reply.
      expect((await a.system.ask<Reply>(to, { op: 'inc' }, { dedupeId: 'inc-1' })).count).toBe(1);
      expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(2);
    });

    it("refuses a stale owner's write after read-only turns, and the retry applies it once", async () => {
      const to = addr('fence-after-read');
      const shard = shardOf(to, 16);
      const r = await a.system.ask<Reply>(to, { op: 'inc' });
      await a.system.ask(to, { op: 'get' });
      // A newer owner took the shard: its epoch moved on in Redis while this node still holds its lease.
      await a.node.infra.redis.incr(a.system.keys.epoch(shard));
      expect((await a.system.ask<Reply>(to, { op: 'get' })).count).toBe(1);
      const fenced = nextEvent(a.system.events, 'fenced', (p: ActorAddress) => p.id === to.id);
      const lost = nextEvent(
        a.system.events,
        'shard-lost',
        (s: number, reason: string) => s === shard && reason === 'fenced',
      );
      const after = await a.system.ask<Reply>(to, { op: 'inc' });
      await Promise.all([fenced, lost]);
      expect(after.epoch).toBeGreaterThan(r.epoch + 1);
      expect(after.count).toBe(2);
      expect((await snapshotOf(to))?.state).toMatchObject({ count: 2 });
    });
  });

  it('refuses a malformed address with a coded error and survives garbage in its inbox', async () => {
    await expect(a.system.ask({ tenant: 'acme', kind: 'nope' as never, id: 'x' }, { op: 'get' })).rejects.toMatchObject(
      { code: 'validation_failed' },
    );
    await expect(a.system.ask({ tenant: '', kind: 'call', id: 'x' }, { op: 'get' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    const { keys, nodeId } = a.system;
    const probe = {
      t: 'req',
      rid: 'r1',
      from: 'probe',
      to: addr('probe'),
      msg: { op: 'inc' },
      dedupeId: 'probe-1',
      attempt: 1,
    };
    await a.node.infra.redis.lpush(
      keys.inbox(nodeId),
      'not json',
      JSON.stringify({ t: 'req', rid: 1 }),
      JSON.stringify(probe),
    );
    const reader = duplicateRedis(a.node.infra.redis);
    try {
      const [, raw] = (await reader.brpop(keys.replies('probe'), 10))!;
      expect(JSON.parse(raw)).toMatchObject({ t: 'rep', rid: 'r1', ok: true, value: { count: 1 } });
    } finally {
      reader.disconnect();
    }
  });

  it('reports its figures through the node metrics', async () => {
    const text = await a.node.infra.metrics.registry.metrics();
    for (const name of [
      'actor_activations_total',
      'actor_messages_routed_total',
      'actor_fenced_writes_total',
      'actor_mailbox_depth',
      'actor_turn_duration_seconds',
      'actor_passivations_total',
    ]) {
      expect(text).toContain(name);
    }
  });
});
