import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, type RedisClient } from '../../../src/data/redis.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import {
  PIN_DAY_SECONDS,
  PIN_HARD_LOCK_SECONDS,
  PinAttemptsStore,
} from '../../../src/data/stores/pin-attempts.store.js';
import { RevocationsStore } from '../../../src/data/stores/revocations.store.js';
import { SigningKeysStore } from '../../../src/data/stores/signing-keys.store.js';
import { uniqueId } from '../../support/env.js';
import {
  FakePinAttemptsStore,
  FakeRevocationsStore,
  FakeSigningKeysStore,
  type PublicPart,
} from '../../support/fakes/index.js';

/**
 * The Redis stores' contract (src/data/stores/pin-attempts.store.ts, revocations.store.ts,
 * signing-keys.store.ts): the same cases on the in-memory fakes and on the real stores against the test
 * Redis, under a key prefix of their own. What only the passing of time shows (a lock ending) is the
 * fakes' clock's: those cases are in the service tests, not here.
 */
interface Stores {
  pins: PublicPart<PinAttemptsStore>;
  revocations: PublicPart<RevocationsStore>;
  signingKeys: PublicPart<SigningKeysStore>;
  close(): Promise<void>;
}

const SIDES: [string, () => Stores][] = [
  [
    'the in-memory fakes',
    () => ({
      pins: new FakePinAttemptsStore(),
      revocations: new FakeRevocationsStore(),
      signingKeys: new FakeSigningKeysStore(),
      close: async () => undefined,
    }),
  ],
  [
    'the real stores on the test Redis',
    () => {
      const redis: RedisClient = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390', 'fakes-contract');
      const prefix = `fc-${uniqueId()}:`;
      const keys = redisKeys(prefix);
      return {
        pins: new PinAttemptsStore({ redis, keys }),
        revocations: new RevocationsStore({ redis, keys }),
        signingKeys: new SigningKeysStore({ redis, keys }),
        close: async () => {
          const left = await redis.keys(`${prefix}*`);
          if (left.length) await redis.del(...left);
          await redis.quit();
        },
      };
    },
  ],
];

const LOCKOUT = { maxAttempts: 2, lockoutSeconds: 60, maxLockoutSeconds: 100, maxFailuresPerDay: 4 };

describe.each(SIDES)('Redis stores on %s', (_name, make) => {
  let s: Stores;
  beforeAll(() => {
    s = make();
  });
  afterAll(async () => s.close());

  it('PIN attempts: reserves guesses per source and day, locks a source at its limit, once', async () => {
    const T = `pins-${uniqueId()}`;
    expect(await s.pins.reserve(T, 'ann', 'a', LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day: 1 });
    expect(await s.pins.fail(T, 'ann', 'a', { fails: 1, day: 1 }, LOCKOUT)).toEqual({ kind: 'failed' });
    expect(await s.pins.reserve(T, 'ann', 'a', LOCKOUT)).toEqual({ kind: 'ok', fails: 2, day: 2 });
    expect(await s.pins.fail(T, 'ann', 'a', { fails: 2, day: 2 }, LOCKOUT)).toEqual({
      kind: 'locked',
      retryAfter: 60,
      level: 1,
      first: true,
    });
    expect(await s.pins.reserve(T, 'ann', 'a', LOCKOUT)).toEqual({ kind: 'locked', retryAfter: 60 });
    // A second failure reported for the lock already set does not set it again.
    expect(await s.pins.fail(T, 'ann', 'a', { fails: 2, day: 2 }, LOCKOUT)).toMatchObject({
      kind: 'locked',
      first: false,
    });
    // Another source still has its guesses; a success gives the reserved guess back to the day.
    expect(await s.pins.reserve(T, 'ann', 'b', LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day: 3 });
    await s.pins.succeed(T, 'ann', 'b');
    expect(await s.pins.reserve(T, 'ann', 'b', LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day: 3 });
  });

  it("PIN attempts: the day's last failure hard-locks every source once; clear starts over", async () => {
    const T = `pins-${uniqueId()}`;
    for (let day = 1; day <= 3; day++) {
      const src = `s${day}`;
      expect(await s.pins.reserve(T, 'bob', src, LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day });
      expect(await s.pins.fail(T, 'bob', src, { fails: 1, day }, LOCKOUT)).toEqual({ kind: 'failed' });
    }
    expect(await s.pins.reserve(T, 'bob', 's4', LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day: 4 });
    const hard = await s.pins.fail(T, 'bob', 's4', { fails: 1, day: 4 }, LOCKOUT);
    expect(hard).toMatchObject({ kind: 'hard', first: true });
    expect((hard as { retryAfter: number }).retryAfter).toBeGreaterThan(PIN_HARD_LOCK_SECONDS - 5);
    expect((hard as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(PIN_HARD_LOCK_SECONDS);
    expect(await s.pins.fail(T, 'bob', 's4', { fails: 1, day: 4 }, LOCKOUT)).toMatchObject({
      kind: 'hard',
      first: false,
    });
    const refused = await s.pins.reserve(T, 'bob', 'fresh', LOCKOUT);
    expect(refused.kind).toBe('hard');
    expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThan(PIN_HARD_LOCK_SECONDS - 5);
    await s.pins.clear(T, 'bob');
    expect(await s.pins.reserve(T, 'bob', 'fresh', LOCKOUT)).toEqual({ kind: 'ok', fails: 1, day: 1 });
  });

  it("PIN attempts: a spent day budget without a hard lock refuses with the day's remaining time", async () => {
    const T = `pins-${uniqueId()}`;
    const tight = { ...LOCKOUT, maxFailuresPerDay: 1 };
    expect(await s.pins.reserve(T, 'cy', 'a', tight)).toEqual({ kind: 'ok', fails: 1, day: 1 });
    const r = await s.pins.reserve(T, 'cy', 'b', tight);
    expect(r.kind).toBe('hard');
    expect((r as { retryAfter: number }).retryAfter).toBeGreaterThan(PIN_DAY_SECONDS - 5);
    expect((r as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(PIN_DAY_SECONDS);
  });

  it('revocations: markers per session, realm session and user, per tenant', async () => {
    const T = `rev-${uniqueId()}`;
    expect(await s.revocations.markers(T, {})).toEqual({ session: false, realmSession: false, notBefore: null });
    await s.revocations.markSession(T, 's1', 60);
    await s.revocations.markRealmSession(T, 'sid-1', 60);
    await s.revocations.setUserNotBefore(T, 'u1', 1_800_000_000, 60);
    expect(await s.revocations.markers(T, { sessionId: 's1', idpSid: 'sid-1', notBeforeOf: 'u1' })).toEqual({
      session: true,
      realmSession: true,
      notBefore: 1_800_000_000,
    });
    expect(await s.revocations.markers(T, { sessionId: 's2', idpSid: 'sid-2', notBeforeOf: 'u2' })).toEqual({
      session: false,
      realmSession: false,
      notBefore: null,
    });
    expect(await s.revocations.isSessionMarked(T, 's1')).toBe(true);
    expect(await s.revocations.isSessionMarked(`${T}-other`, 's1')).toBe(false);
  });

  it('revocations: a published message reaches a subscriber as JSON, until it unsubscribes', async () => {
    const got: unknown[] = [];
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    const stop = await s.revocations.subscribe((m) => {
      got.push(m);
      arrived();
    });
    await s.revocations.publish({ type: 'session', tenant: 't', userId: 'u', sessionId: 's', at: new Date(0) });
    await first;
    await stop();
    expect(got).toEqual([
      { type: 'session', tenant: 't', userId: 'u', sessionId: 's', at: '1970-01-01T00:00:00.000Z' },
    ]);
  });

  it('signing keys: first writer of a field wins, a replace needs the value read, fields removed', async () => {
    await s.signingKeys.addIfAbsent('g1', 'sealed-a');
    await s.signingKeys.addIfAbsent('g1', 'sealed-b');
    await s.signingKeys.put('r2', 'sealed-r');
    expect(await s.signingKeys.all()).toEqual({ g1: 'sealed-a', r2: 'sealed-r' });
    expect(await s.signingKeys.replace('g1', 'sealed-b', 'sealed-c')).toBe(false);
    expect(await s.signingKeys.replace('g1', 'sealed-a', 'sealed-c')).toBe(true);
    await s.signingKeys.remove(['r2']);
    expect(await s.signingKeys.all()).toEqual({ g1: 'sealed-c' });
  });
});
