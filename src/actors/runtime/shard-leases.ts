import { performance } from 'node:perf_hooks';
import type { RedisClient } from '../../data/redis.js';
import type { ActorKeys } from './actor-keys.js';
import { ACQUIRE, EVICT_LEASE, RELEASE, RENEW } from './scripts.js';
import { probeClock, turnProbe } from './turn-probe.js';

/** A shard this node holds: its fencing epoch and how long (monotonic clock) it may still serve it. */
export interface ShardLease {
  shard: number;
  epoch: number;
  /** `node|epoch`, the lease value in Redis. */
  value: string;
  /** performance.now() after which the node must stop serving (lease TTL minus the safety margin). */
  validUntil: number;
  /** Set during handoff: turns stop, new messages are buffered for the next owner. */
  handingOff: boolean;
  /** Its handoff let the last turn finish: nothing more is served under it, asks of turns included. */
  settled?: boolean;
}

export interface ShardLeasesDeps {
  redis: RedisClient;
  keys: ActorKeys;
  nodeId: string;
  leaseMs: number;
}

/** Monotonic milliseconds; wall-clock jumps never extend a lease. */
export const monotonicNow = (): number => performance.now();

/**
 * The shards this node owns. Validity is measured from the moment the acquire/renew request was
 * SENT, minus a safety margin, so the node stops serving strictly before Redis can expire the lease
 * and hand it to someone else (self-fencing), even if its event loop stalls or Redis is unreachable.
 */
export class ShardLeases {
  private readonly held = new Map<number, ShardLease>();
  readonly marginMs: number;

  constructor(private readonly deps: ShardLeasesDeps) {
    this.marginMs = Math.max(50, Math.floor(deps.leaseMs / 5));
  }

  get(shard: number): ShardLease | undefined {
    return this.held.get(shard);
  }

  all(): ShardLease[] {
    return [...this.held.values()];
  }

  /** True when this node may start a turn on the shard right now. */
  isServing(shard: number): boolean {
    const l = this.held.get(shard);
    return !!l && !l.handingOff && monotonicNow() < l.validUntil;
  }

  /** Leases whose validity has passed: the node must stop serving them now. */
  lapsed(now = monotonicNow()): ShardLease[] {
    return this.all().filter((l) => now >= l.validUntil);
  }

  /** Claims the shard if vacant (or held by this node); undefined when another node holds it. */
  async acquire(shard: number): Promise<ShardLease | undefined> {
    const { redis, keys, nodeId, leaseMs } = this.deps;
    const sentAt = monotonicNow();
    const probe = turnProbe();
    const probeSent = probe ? probeClock() : 0;
    const [won, value] = await ACQUIRE.run<[number, string]>(
      redis,
      [keys.lease(shard), keys.epoch(shard)],
      [nodeId, leaseMs],
    );
    if (won !== 1) return undefined;
    const epoch = Number(value);
    probe?.acquired(nodeId, shard, epoch, probeSent, probeClock());
    const lease: ShardLease = {
      shard,
      epoch,
      value: `${nodeId}|${epoch}`,
      validUntil: sentAt + leaseMs - this.marginMs,
      handingOff: false,
    };
    this.held.set(shard, lease);
    return lease;
  }

  /** The node named by the shard's lease in Redis, if any. */
  async holder(shard: number): Promise<string | undefined> {
    return (await this.lookup(shard))?.node;
  }

  /** The shard's lease holder and the lease's remaining TTL (one round trip), if the lease exists. */
  async lookup(shard: number): Promise<{ node: string; ttlMs: number } | undefined> {
    const { redis, keys } = this.deps;
    const [v, ttl] = await Promise.all([redis.get(keys.lease(shard)), redis.pttl(keys.lease(shard))]);
    return v ? { node: v.slice(0, v.lastIndexOf('|')), ttlMs: Math.max(0, ttl) } : undefined;
  }

  /** Renews every held lease; returns the shards Redis no longer gives this node. */
  async renewAll(): Promise<number[]> {
    const { redis, keys, leaseMs } = this.deps;
    const sentAt = monotonicNow();
    const leases = this.all();
    const results = await Promise.all(
      leases.map((l) => RENEW.run<number>(redis, [keys.lease(l.shard)], [l.value, leaseMs]).catch(() => -1)),
    );
    const lost: number[] = [];
    leases.forEach((l, i) => {
      if (this.held.get(l.shard) !== l) return;
      if (results[i] === 1) l.validUntil = sentAt + leaseMs - this.marginMs;
      else if (results[i] === 0) lost.push(l.shard);
    });
    return lost;
  }

  /** Gives the lease back so the next owner can claim without waiting for expiry. */
  async release(lease: ShardLease): Promise<void> {
    this.forget(lease);
    await RELEASE.run<number>(this.deps.redis, [this.deps.keys.lease(lease.shard)], [lease.value]);
  }

  /**
   * Deletes every lease of `shards` that still names `node` (a crashed node, decision 1116), one
   * compare-and-delete per shard key (the keys sit in different slots). Returns the shards freed,
   * each with the time its lease still had to run.
   */
  async evictHolder(node: string, shards: number): Promise<{ shard: number; ttlMs: number }[]> {
    const { redis, keys } = this.deps;
    const results = await Promise.all(
      [...Array(shards).keys()].map((s) => EVICT_LEASE.run<[number, number?]>(redis, [keys.lease(s)], [node])),
    );
    return results.flatMap(([deleted, ttl], shard) => (deleted === 1 ? [{ shard, ttlMs: Number(ttl) }] : []));
  }

  /** Drops the local record only (self-fenced or lost): Redis lets the lease expire. */
  forget(lease: ShardLease): void {
    if (this.held.get(lease.shard) === lease) this.held.delete(lease.shard);
  }
}

/** A shard handed off still serves asks of turns until its last turn ended, under a valid lease. */
export function servesNested(lease: ShardLease): boolean {
  return lease.handingOff && !lease.settled && monotonicNow() < lease.validUntil;
}
