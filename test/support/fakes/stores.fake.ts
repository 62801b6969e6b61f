import {
  PIN_DAY_SECONDS,
  PIN_HARD_LOCK_SECONDS,
  type FailureOutcome,
  type PinAttemptsStore,
  type PinLockout,
  type Reservation,
} from '../../../src/data/stores/pin-attempts.store.js';
import type { RevocationMarkers, RevocationsStore } from '../../../src/data/stores/revocations.store.js';
import type { SigningKeysStore } from '../../../src/data/stores/signing-keys.store.js';
import type { PublicPart } from './port.js';

/**
 * A clock the Redis fakes read instead of Redis's TIME, which a test moves on by hand (`advance`) to
 * reach the end of a lock or of a marker's lifetime without waiting.
 */
export class FakeClock {
  constructor(private ms = Date.now()) {}

  now(): number {
    return this.ms;
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** Keys with an expiry, read against a FakeClock, as Redis keys with EX. */
class Expiring<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly clock: FakeClock) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** Seconds left, as Redis's TTL rounds them; -2 when the key is gone. */
  ttl(key: string): number {
    return this.get(key) === undefined ? -2 : Math.round((this.entries.get(key)!.until - this.clock.now()) / 1000);
  }

  set(key: string, value: V, seconds: number): void {
    this.entries.set(key, { value, until: this.clock.now() + seconds * 1000 });
  }

  /** Changes the value and keeps the expiry (HSET / INCR on an existing key). */
  put(key: string, value: V): void {
    const e = this.entries.get(key);
    if (e && this.get(key) !== undefined) e.value = value;
  }

  expire(key: string, seconds: number): void {
    const e = this.entries.get(key);
    if (e && this.get(key) !== undefined) e.until = this.clock.now() + seconds * 1000;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

interface SourceState {
  fails: number;
  level: number;
  untilMs: number;
}

/**
 * PIN attempts and locks in memory (src/data/stores/pin-attempts.store.ts): the same three keys per
 * account (the sources hash, the day's count, the hard lock) with the same lifetimes, and the rules of
 * its RESERVE, FAIL and SUCCEED scripts step for step. Each operation runs without yielding, as a
 * script does, so concurrent guesses cannot overtake the rules here either.
 */
export class FakePinAttemptsStore implements PublicPart<PinAttemptsStore> {
  private readonly sources: Expiring<Map<string, SourceState>>;
  private readonly day: Expiring<number>;
  private readonly hard: Expiring<true>;

  constructor(private readonly clock = new FakeClock()) {
    this.sources = new Expiring(clock);
    this.day = new Expiring(clock);
    this.hard = new Expiring(clock);
  }

  private key(tenant: string, username: string): string {
    return `${tenant}\u0000${username}`;
  }

  private source(k: string, src: string): SourceState {
    return this.sources.get(k)?.get(src) ?? { fails: 0, level: 0, untilMs: 0 };
  }

  /** HSET on the sources hash: creates it without an expiry when absent, as Redis does. */
  private putSource(k: string, src: string, s: SourceState, expireSeconds: number): void {
    const map = this.sources.get(k) ?? new Map<string, SourceState>();
    map.set(src, s);
    this.sources.set(k, map, expireSeconds);
  }

  async reserve(tenant: string, username: string, source: string, lockout: PinLockout): Promise<Reservation> {
    const k = this.key(tenant, username);
    if (this.hard.get(k)) return { kind: 'hard', retryAfter: this.hard.ttl(k) };
    const s = this.source(k, source);
    const now = this.clock.now();
    if (s.untilMs > now) return { kind: 'locked', retryAfter: Math.max(Math.ceil((s.untilMs - now) / 1000), 1) };
    if (s.fails >= lockout.maxAttempts) return { kind: 'locked', retryAfter: 1 };
    const dayCount = this.day.get(k) ?? 0;
    if (dayCount >= lockout.maxFailuresPerDay) {
      const ttl = this.day.ttl(k);
      return { kind: 'hard', retryAfter: ttl > 0 ? ttl : PIN_HARD_LOCK_SECONDS };
    }
    const fails = s.fails + 1;
    this.putSource(k, source, { ...s, fails }, PIN_DAY_SECONDS);
    const day = dayCount + 1;
    if (day === 1) this.day.set(k, day, PIN_DAY_SECONDS);
    else this.day.put(k, day);
    return { kind: 'ok', fails, day };
  }

  async fail(
    tenant: string,
    username: string,
    source: string,
    r: { fails: number; day: number },
    lockout: PinLockout,
  ): Promise<FailureOutcome> {
    const k = this.key(tenant, username);
    if (r.day >= lockout.maxFailuresPerDay) {
      const first = !this.hard.get(k);
      if (first) this.hard.set(k, true, PIN_HARD_LOCK_SECONDS);
      return { kind: 'hard', retryAfter: this.hard.ttl(k), first };
    }
    if (r.fails < lockout.maxAttempts) return { kind: 'failed' };
    const s = this.source(k, source);
    const now = this.clock.now();
    if (s.untilMs > now)
      return { kind: 'locked', retryAfter: Math.max(Math.ceil((s.untilMs - now) / 1000), 1), level: 0, first: false };
    const level = s.level + 1;
    const seconds = Math.min(lockout.lockoutSeconds * 2 ** (level - 1), lockout.maxLockoutSeconds);
    this.putSource(k, source, { fails: 0, level, untilMs: now + seconds * 1000 }, Math.max(PIN_DAY_SECONDS, seconds));
    return { kind: 'locked', retryAfter: Math.max(seconds, 1), level, first: true };
  }

  async succeed(tenant: string, username: string, source: string): Promise<void> {
    const k = this.key(tenant, username);
    this.sources.get(k)?.delete(source);
    const day = this.day.get(k) ?? 0;
    if (day > 0) this.day.put(k, day - 1);
  }

  async clear(tenant: string, username: string): Promise<void> {
    const k = this.key(tenant, username);
    this.sources.delete(k);
    this.day.delete(k);
    this.hard.delete(k);
  }
}

/**
 * Revocation markers and the revocation channel in memory (src/data/stores/revocations.store.ts):
 * markers expire by the FakeClock; a published message reaches every subscriber (the nodes of one fake
 * deployment), as JSON does, a copy of what was published.
 */
export class FakeRevocationsStore implements PublicPart<RevocationsStore> {
  private readonly marks: Expiring<string>;
  private readonly listeners = new Set<(message: unknown) => void>();
  /** Every message published, in order (what a test reads to see what was announced). */
  readonly published: unknown[] = [];

  constructor(clock = new FakeClock()) {
    this.marks = new Expiring(clock);
  }

  async markSession(tenant: string, sessionId: string, ttlSeconds: number): Promise<void> {
    this.marks.set(`s\u0000${tenant}\u0000${sessionId}`, '1', ttlSeconds);
  }

  async markRealmSession(tenant: string, sid: string, ttlSeconds: number): Promise<void> {
    this.marks.set(`r\u0000${tenant}\u0000${sid}`, '1', ttlSeconds);
  }

  async setUserNotBefore(tenant: string, userId: string, epochSeconds: number, ttlSeconds: number): Promise<void> {
    this.marks.set(`u\u0000${tenant}\u0000${userId}`, String(epochSeconds), ttlSeconds);
  }

  async markers(
    tenant: string,
    of: { sessionId?: string; idpSid?: string; notBeforeOf?: string },
  ): Promise<RevocationMarkers> {
    const nb = of.notBeforeOf ? this.marks.get(`u\u0000${tenant}\u0000${of.notBeforeOf}`) : undefined;
    return {
      session: !!of.sessionId && this.marks.get(`s\u0000${tenant}\u0000${of.sessionId}`) !== undefined,
      realmSession: !!of.idpSid && this.marks.get(`r\u0000${tenant}\u0000${of.idpSid}`) !== undefined,
      notBefore: nb === undefined ? null : Number(nb),
    };
  }

  async isSessionMarked(tenant: string, sessionId: string): Promise<boolean> {
    return this.marks.get(`s\u0000${tenant}\u0000${sessionId}`) !== undefined;
  }

  async publish(message: object): Promise<void> {
    const text = JSON.stringify(message);
    this.published.push(JSON.parse(text));
    for (const l of this.listeners) l(JSON.parse(text));
  }

  async subscribe(onMessage: (message: unknown) => void): Promise<() => Promise<void>> {
    this.listeners.add(onMessage);
    return async () => void this.listeners.delete(onMessage);
  }
}

/** The internal tokens' signing keys in memory (src/data/stores/signing-keys.store.ts): one hash, field -> sealed key. */
export class FakeSigningKeysStore implements PublicPart<SigningKeysStore> {
  private readonly fields = new Map<string, string>();

  get location(): string {
    return 'memory (fake signing keys store)';
  }

  async all(): Promise<Record<string, string>> {
    return Object.fromEntries(this.fields);
  }

  async addIfAbsent(field: string, sealed: string): Promise<void> {
    if (!this.fields.has(field)) this.fields.set(field, sealed);
  }

  async put(field: string, sealed: string): Promise<void> {
    this.fields.set(field, sealed);
  }

  async replace(field: string, was: string, sealed: string): Promise<boolean> {
    if (this.fields.get(field) !== was) return false;
    this.fields.set(field, sealed);
    return true;
  }

  async remove(fields: readonly string[]): Promise<void> {
    for (const f of fields) this.fields.delete(f);
  }
}
