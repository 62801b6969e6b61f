import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { PushHistoryStore, type PushHistoryLimits } from '../../../src/data/stores/push-history.store.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import { dedicatedRedis, type DedicatedService } from '../../support/dedicated-services.js';
import { uniqueId } from '../../support/env.js';

const LIMITS: PushHistoryLimits = { windowMs: 120_000, maxPushes: 500, positionTtlMs: 86_400_000 };
let epochs = 0;
const store = (redis: Redis, limits: Partial<PushHistoryLimits> = {}, prefix = `test:${uniqueId()}:`) =>
  new PushHistoryStore({
    redis,
    keys: redisKeys(prefix),
    limits: { ...LIMITS, ...limits },
    epoch: () => `e${++epochs}`,
  });

/** The per-recipient push history (src/data/stores/push-history.store.ts) against real Redis servers. */
describe('push history store', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('numbers each recipient’s pushes without gaps and replays those after a position, oldest first', async () => {
    const s = store(redis);
    const start = await s.read('acme', 'u:1');
    expect(start).toMatchObject({ kind: 'current', position: { seq: 0 } });
    const epoch = start.position.epoch;
    for (let i = 1; i <= 5; i++)
      expect(await s.append('acme', 'u:1', 'meetingEvent', JSON.stringify({ i }))).toEqual({ epoch, seq: i });
    expect(await s.append('acme', 'u:2', 'onNewCall', '{}')).toMatchObject({ seq: 1 });
    const r = await s.read('acme', 'u:1', { epoch, seq: 2 });
    expect(r).toEqual({
      kind: 'ok',
      position: { epoch, seq: 5 },
      pushes: [3, 4, 5].map((i) => ({ seq: i, event: 'meetingEvent', payload: JSON.stringify({ i }) })),
    });
    expect(await s.read('acme', 'u:1', { epoch, seq: 5 })).toEqual({
      kind: 'ok',
      position: { epoch, seq: 5 },
      pushes: [],
    });
    expect(await s.read('acme', 'u:1', { epoch, seq: 2 }, true)).toEqual({
      kind: 'ok',
      position: { epoch, seq: 5 },
      pushes: [],
    });
  });

  it('answers resync past the count limit, for another epoch, and for a position ahead of the history', async () => {
    const s = store(redis, { maxPushes: 3 });
    const { position } = await s.read('acme', 'u:1');
    for (let i = 1; i <= 5; i++) await s.append('acme', 'u:1', 'meetingEvent', '{}');
    const epoch = position.epoch;
    expect(await s.read('acme', 'u:1', { epoch, seq: 1 })).toEqual({ kind: 'resync', position: { epoch, seq: 5 } });
    expect((await s.read('acme', 'u:1', { epoch, seq: 2 })).kind).toBe('ok');
    expect(await s.read('acme', 'u:1', { epoch: 'other', seq: 4 })).toEqual({
      kind: 'resync',
      position: { epoch, seq: 5 },
    });
    expect(await s.read('acme', 'u:1', { epoch, seq: 9 })).toEqual({ kind: 'resync', position: { epoch, seq: 5 } });
  });

  it('answers resync past the time window', async () => {
    const s = store(redis, { windowMs: 300 });
    const { position } = await s.read('acme', 'u:1');
    await s.append('acme', 'u:1', 'onNewCall', '{}');
    expect((await s.read('acme', 'u:1', position)).kind).toBe('ok');
    // The window is Redis's own clock: wait until Redis's time has moved past it.
    const t0 = Number((await redis.time())[0]) * 1000 + Math.floor(Number((await redis.time())[1]) / 1000);
    for (;;) {
      const [sec, us] = await redis.time();
      if (Number(sec) * 1000 + Math.floor(Number(us) / 1000) > t0 + 400) break;
      await new Promise((r) => setImmediate(r));
    }
    expect(await s.read('acme', 'u:1', position)).toEqual({
      kind: 'resync',
      position: { epoch: position.epoch, seq: 1 },
    });
  });

  it('costs a bounded amount of memory per recipient (MEMORY USAGE of a full history)', async () => {
    const s = store(redis);
    const prefix = `test:${uniqueId()}:`;
    const full = store(redis, {}, prefix);
    // A typical recoverable push: a meetingEvent of about 200 bytes of JSON.
    const payload = JSON.stringify({
      eventId: '66f1c2a9e4b0a1b2c3d4e5f6',
      seq: 123,
      type: 'notify',
      at: new Date().toISOString(),
      by: '66f1c2a9e4b0a1b2c3d4e5f7',
      data: { action: 'slide', payload: { page: 12 } },
    });
    for (let i = 0; i < 520; i++) await full.append('acme', 'u:1', 'meetingEvent', payload);
    const keys = redisKeys(prefix);
    expect(await redis.xlen(keys.pushStream('acme', 'u:1'))).toBe(500);
    const stream = Number(await redis.call('MEMORY', 'USAGE', keys.pushStream('acme', 'u:1'), 'SAMPLES', '0'));
    const pos = Number(await redis.call('MEMORY', 'USAGE', keys.pushPosition('acme', 'u:1'), 'SAMPLES', '0'));
    // Printed for docs/hub.md; bounded because the history holds at most maxPushes entries.
    console.log(`push history: ${stream} bytes for 500 pushes of ${payload.length} bytes, position hash ${pos} bytes`);
    expect(stream).toBeLessThan(500 * (payload.length + 100));
    void s;
  });

  it('records a push sent again under its origin once, with the position it was given; an older turn of its origin not again (decision 1133)', async () => {
    const s = store(redis);
    const { position } = await s.read('acme', 'u:1');
    const epoch = position.epoch;
    const turn40 = { source: 'acme/meeting/e1', epoch: 7, turn: 40 };
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":1}', { ...turn40, index: 0 })).toEqual({
      epoch,
      seq: 1,
    });
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":2}', { ...turn40, index: 1 })).toEqual({
      epoch,
      seq: 2,
    });
    // Another source's push between (no origin): numbered as before.
    expect(await s.append('acme', 'u:1', 'onNewCall', '{"c":1}')).toEqual({ epoch, seq: 3 });
    // The same turn's pushes sent again (a next owner sending the outbox it found): their positions, nothing new.
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":2}', { ...turn40, index: 1 })).toEqual({
      epoch,
      seq: 2,
    });
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":1}', { ...turn40, index: 0 })).toEqual({
      epoch,
      seq: 1,
    });
    // The source's next turn, then a later owner's (higher epoch, lower turn number): recorded.
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":3}', { ...turn40, turn: 41, index: 0 })).toEqual({
      epoch,
      seq: 4,
    });
    expect(
      await s.append('acme', 'u:1', 'meetingEvent', '{"a":4}', { ...turn40, epoch: 8, turn: 3, index: 0 }),
    ).toEqual({
      epoch,
      seq: 5,
    });
    // Older turns of the source, sent late: recorded before, not again.
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":3}', { ...turn40, turn: 41, index: 0 })).toBeUndefined();
    expect(await s.append('acme', 'u:1', 'meetingEvent', '{"a":1}', { ...turn40, index: 0 })).toBeUndefined();
    // Per recipient: the same origin is new to another recipient.
    expect(await s.append('acme', 'u:2', 'meetingEvent', '{"a":1}', { ...turn40, index: 0 })).toMatchObject({ seq: 1 });
    const r = await s.read('acme', 'u:1', { epoch, seq: 0 });
    expect(r.kind === 'ok' && r.pushes.map((p) => [p.seq, p.payload])).toEqual([
      [1, '{"a":1}'],
      [2, '{"a":2}'],
      [3, '{"c":1}'],
      [4, '{"a":3}'],
      [5, '{"a":4}'],
    ]);
  });

  it('appends one push to many recipients in one call, each answered as its own append would be (decision 1154)', async () => {
    const s = store(redis);
    const turn = { source: 'acme/meeting/e9', epoch: 3, turn: 10 };
    // Recipients with histories of different lengths, one new, one that has this push already.
    await s.append('acme', 'u:a', 'onNewCall', '{}');
    await s.append('acme', 'u:a', 'onNewCall', '{}');
    const had = await s.append('acme', 'u:b', 'meetingEvent', '{"m":1}', { ...turn, index: 0 });
    const epochA = (await s.read('acme', 'u:a')).position.epoch;
    const calls = jest.spyOn(redis, 'evalsha');
    const many = await s.appendMany('acme', ['u:a', 'u:b', 'u:c'], 'meetingEvent', '{"m":1}', { ...turn, index: 0 });
    expect(calls).toHaveBeenCalledTimes(1);
    calls.mockRestore();
    expect(many).toEqual([{ epoch: epochA, seq: 3 }, had, { epoch: expect.any(String), seq: 1 }]);
    // An older turn of the origin, sent late: recorded before for every recipient, not again.
    expect(
      await s.appendMany('acme', ['u:a', 'u:c'], 'meetingEvent', '{"m":0}', { ...turn, turn: 9, index: 0 }),
    ).toEqual([undefined, undefined]);
    for (const [stream, count] of [
      ['u:a', 3],
      ['u:b', 1],
      ['u:c', 1],
    ] as const) {
      const r = await s.read('acme', stream, { epoch: (await s.read('acme', stream)).position.epoch, seq: 0 });
      expect(r.kind === 'ok' && r.pushes.length).toBe(count);
    }
    // A roster larger than one call carries: every recipient numbered, in order.
    const big = Array.from({ length: 150 }, (_, i) => `u:big${i}`);
    const positions = await s.appendMany('acme', big, 'meetingEvent', '{"m":2}');
    expect(positions.map((p) => p?.seq)).toEqual(big.map(() => 1));
  });

  it('reads the meeting rosters and appends to their members in the same call: one round trip per push to a meeting', async () => {
    const s = store(redis);
    const rosterA = `meeting:acme:${uniqueId()}`;
    const rosterB = `meeting-devices:acme:${uniqueId()}`;
    await s.enroll(rosterA, ['u:m1', 'u:m2', 'd:h1']);
    await s.enroll(rosterB, ['d:h1', 'd:h2']);
    await s.append('acme', 'u:m2', 'onNewCall', '{}');
    const turn = { source: 'acme/meeting/e1', epoch: 5, turn: 1, index: 0 };
    const evals = jest.spyOn(redis, 'evalsha');
    const reads = jest.spyOn(redis, 'smembers');
    const { written } = await s.appendWithRosters(
      'acme',
      ['u:host', 'u:m1'],
      [rosterA, rosterB],
      'meetingEvent',
      '{"m":1}',
      turn,
    );
    const got = await written;
    expect(evals).toHaveBeenCalledTimes(1);
    expect(reads).not.toHaveBeenCalled();
    evals.mockRestore();
    reads.mockRestore();
    // The named first, then each roster's members not met before (a set's order); each numbered as its own
    // append would be.
    const seqs = (list: typeof got) => Object.fromEntries(list.map((r) => [r.stream, r.position?.seq]));
    expect(got.slice(0, 2).map((r) => r.stream)).toEqual(['u:host', 'u:m1']);
    expect(seqs(got)).toEqual({ 'u:host': 1, 'u:m1': 1, 'u:m2': 2, 'd:h1': 1, 'd:h2': 1 });
    expect(got).toHaveLength(5);
    for (const r of got) expect(r.position?.epoch).toBe((await s.read('acme', r.stream)).position.epoch);
    // The same push again under its origin: the positions it was given, nothing recorded twice.
    const again = await (
      await s.appendWithRosters('acme', ['u:host'], [rosterA, rosterB], 'meetingEvent', '{"m":1}', turn)
    ).written;
    expect(again).toHaveLength(5);
    expect(seqs(again)).toEqual(seqs(got));
    const m2pos = got.find((r) => r.stream === 'u:m2')!.position!;
    const m2 = await s.read('acme', 'u:m2', { epoch: m2pos.epoch, seq: 0 });
    expect(m2.kind === 'ok' && m2.pushes.map((p) => p.event)).toEqual(['onNewCall', 'meetingEvent']);
    // An empty roster and no one named: nothing recorded, no one answered.
    expect(
      await (
        await s.appendWithRosters('acme', [], [`meeting:acme:${uniqueId()}`], 'meetingEvent', '{}')
      ).written,
    ).toEqual([]);
  });

  it('a roster larger than one call carries: read by the script, appended in calls of the usual size, in order', async () => {
    const s = store(redis);
    const room = `meeting:acme:${uniqueId()}`;
    const members = Array.from({ length: 100 }, (_, i) => `u:r${i}`);
    await s.enroll(room, members);
    const first = await (await s.appendWithRosters('acme', ['u:r0'], [room], 'meetingEvent', '{"n":1}')).written;
    const second = await (await s.appendWithRosters('acme', [], [room], 'meetingEvent', '{"n":2}')).written;
    expect(new Set(first.map((r) => r.stream))).toEqual(new Set(members));
    expect(first).toHaveLength(100);
    expect(first.every((r) => r.position?.seq === 1)).toBe(true);
    expect(second.every((r) => r.position?.seq === 2)).toBe(true);
    const r = await s.read('acme', 'u:r99', {
      epoch: first.find((x) => x.stream === 'u:r99')!.position!.epoch,
      seq: 0,
    });
    expect(r.kind === 'ok' && r.pushes.map((p) => p.payload)).toEqual(['{"n":1}', '{"n":2}']);
  });

  it('keeps one short field per source in a recipient’s position hash (MEMORY USAGE with 20 meetings)', async () => {
    const prefix = `test:${uniqueId()}:`;
    const s = store(redis, {}, prefix);
    for (let m = 0; m < 20; m++)
      for (let turn = 1; turn <= 3; turn++)
        await s.append('acme', 'u:1', 'meetingEvent', '{}', {
          source: `acme/meeting/66f1c2a9e4b0a1b2c3d4e5${String(m).padStart(2, '0')}`,
          epoch: 12,
          turn: 1_000_000 + turn,
          index: 0,
        });
    const keys = redisKeys(prefix);
    const fields = await redis.hlen(keys.pushPosition('acme', 'u:1'));
    const bytes = Number(await redis.call('MEMORY', 'USAGE', keys.pushPosition('acme', 'u:1'), 'SAMPLES', '0'));
    // Printed for decision 1133: the last turn per source, never one field per push.
    console.log(`position hash with 20 sources: ${fields} fields, ${bytes} bytes`);
    expect(fields).toBe(3 + 20);
    expect(bytes).toBeLessThan(20 * 120 + 200);
  });
});

describe('push history across a Redis restart', () => {
  let server: DedicatedService;
  let redis: Redis;
  beforeAll(async () => {
    server = await dedicatedRedis();
    await server.start();
    redis = new Redis(server.url, { maxRetriesPerRequest: null });
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await server?.destroy();
  });

  it("sends its scripts once per server, then by digest: a recipient's append is not 2 KB of Lua each time", async () => {
    const calls = async () => {
      const stats = await redis.info('commandstats');
      const n = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { eval: n('eval'), evalsha: n('evalsha') };
    };
    await redis.script('FLUSH');
    await redis.config('RESETSTAT');
    const s = store(redis);
    for (let i = 0; i < 20; i++) await s.append('acme', `u:s${i % 4}`, 'onNewCall', `{"n":${i}}`);
    await s.read('acme', 'u:s0', { epoch: 'gone', seq: 1 });
    await s.read('acme', 'u:s1');
    // Each of the 22 runs asked by digest; the append and the read scripts' text went once each, after
    // the server answered that it lacked them (NOSCRIPT).
    expect(await calls()).toEqual({ eval: 2, evalsha: 22 });
    // A server that lost its scripts (restart, flush, a cluster node not asked before) is sent them again.
    await redis.script('FLUSH');
    expect(await s.append('acme', 'u:s0', 'onNewCall', '{"n":20}')).toMatchObject({ seq: 6 });
    expect(await calls()).toEqual({ eval: 3, evalsha: 23 });
  });

  it('a restarted Redis (data kept) starts a new epoch: an old position is resync, never a number given twice', async () => {
    const s = store(redis);
    const { position } = await s.read('acme', 'u:1');
    await s.append('acme', 'u:1', 'onNewCall', '{"n":1}');
    await s.append('acme', 'u:1', 'onNewCall', '{"n":2}');
    await server.stop();
    await server.start();
    const after = await s.read('acme', 'u:1', { epoch: position.epoch, seq: 1 });
    expect(after.kind).toBe('resync');
    expect(after.position.epoch).not.toBe(position.epoch);
    expect(after.position.seq).toBe(0);
    expect(await s.append('acme', 'u:1', 'onNewCall', '{"n":3}')).toEqual({ epoch: after.position.epoch, seq: 1 });
  }, 60_000);

  it('a restarted Redis that lost its data: the old position is resync as well', async () => {
    const s = store(redis);
    const { position } = await s.read('acme', 'u:9');
    await s.append('acme', 'u:9', 'onNewCall', '{}');
    await redis.flushall();
    const r = await s.read('acme', 'u:9', { epoch: position.epoch, seq: 1 });
    expect(r.kind).toBe('resync');
    expect(r.position.epoch).not.toBe(position.epoch);
  });
});

/** A deployment's epochs (src/realtime/push-history.ts epochSource): never the same twice, within the schema's 32. */
describe('push history epochs', () => {
  it('are distinct within a process and between processes, and fit a position', async () => {
    const { epochSource } = await import('../../../src/realtime/push-history.js');
    const { PositionSchema } = await import('../../../src/hub/hub.resume.js');
    const a = epochSource();
    const b = epochSource();
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(a());
    for (let i = 0; i < 1000; i++) seen.add(b());
    expect(seen.size).toBe(101_000);
    const last = a();
    expect(last.length).toBeLessThanOrEqual(32);
    expect(PositionSchema.safeParse({ stream: 'u:1', epoch: last, seq: 1 }).success).toBe(true);
    // The prefix alone tells two sources apart: a counter restarting in another process draws a new one.
    expect(epochSource('p')()).toBe('p0');
  });
});
