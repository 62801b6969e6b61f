import type { RedisClient } from '../../data/redis.js';
import { z } from 'zod';
import type { ActorKeys } from './actor-keys.js';
import { CHECK_FENCE, CLEAR_OUTBOX, SAVE_TURN } from './scripts.js';

const TimerEntrySchema = z.object({ name: z.string(), due: z.number(), msg: z.unknown() });
const SnapshotSchema = z.object({ state: z.unknown(), timers: z.array(TimerEntrySchema), epoch: z.number() });
const TurnReplySchema = z.object({
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

export type TimerEntry = z.infer<typeof TimerEntrySchema>;
export type Snapshot = z.infer<typeof SnapshotSchema>;
/** The remembered outcome of a turn, replayed to a retried message with the same de-duplication id. */
export type TurnReply = z.infer<typeof TurnReplySchema>;

/** What one turn persists: the snapshot (or its deletion) and the reply under its de-duplication id. */
export interface TurnWrite {
  mode: 'set' | 'del' | 'none';
  snapshot?: Snapshot;
  /** A retired snapshot (`set` only): it expires after this many ms unless a later turn writes it again. */
  expireMs?: number;
  dedupeId?: string;
  reply?: TurnReply;
  /** The turn's pushes (JSON), kept in the actor's outbox until `sent()`. */
  pushes?: string;
}

export interface WriterLease {
  shard: number;
  epoch: number;
  value: string;
}

/** Actor snapshots, the timer index and remembered replies, all written through the epoch fence. */
export class SnapshotStore {
  constructor(private readonly deps: { redis: RedisClient; keys: ActorKeys; dedupeTtlMs: number }) {}

  async load(shard: number, key: string): Promise<Snapshot | undefined> {
    return (await this.activate(shard, key)).snapshot;
  }

  /**
   * What an activation starts from, in one round trip: the snapshot, and the pushes of a saved turn that
   * were never sent (JSON; its node died between the save and the sending).
   */
  async activate(shard: number, key: string): Promise<{ snapshot?: Snapshot; unsent?: string }> {
    const { redis, keys } = this.deps;
    const [raw, unsent] = await redis.mget(keys.snapshot(shard, key), keys.outbox(shard, key));
    return {
      ...(raw ? { snapshot: SnapshotSchema.parse(JSON.parse(raw)) } : {}),
      ...(unsent ? { unsent } : {}),
    };
  }

  /**
   * The outbox entry `written` was sent: deleted if it is still the actor's outbox (a later turn, of this
   * owner or a newer one, wrote its own, which is not this sender's to delete). Not fenced by the lease:
   * an owner that lost its shard after sending still clears what it sent (decision 1129's addendum).
   */
  async sent(shard: number, key: string, written: string): Promise<void> {
    const { redis, keys } = this.deps;
    await CLEAR_OUTBOX.run(redis, [keys.outbox(shard, key)], [written]);
  }

  async lookupReply(shard: number, key: string, dedupeId: string): Promise<TurnReply | undefined> {
    const raw = await this.deps.redis.get(this.deps.keys.dedupe(shard, key, dedupeId));
    return raw ? TurnReplySchema.parse(JSON.parse(raw)) : undefined;
  }

  /** Persists a turn; false when the writer's epoch is stale (the write was rejected by Redis). */
  async saveTurn(lease: WriterLease, key: string, w: TurnWrite): Promise<boolean> {
    const { redis, keys, dedupeTtlMs } = this.deps;
    const s = lease.shard;
    const dedupeKey = w.dedupeId ? keys.dedupe(s, key, w.dedupeId) : keys.snapshot(s, key);
    const timers = w.snapshot?.timers ?? [];
    const nextDue = w.mode === 'set' && timers.length ? String(Math.min(...timers.map((t) => t.due))) : '';
    const ok = await SAVE_TURN.run<number>(
      redis,
      [keys.lease(s), keys.epoch(s), keys.snapshot(s, key), keys.timers(s), dedupeKey, keys.outbox(s, key)],
      [
        lease.value,
        String(lease.epoch),
        w.mode,
        w.snapshot ? JSON.stringify(w.snapshot) : '',
        key,
        nextDue,
        w.dedupeId && w.reply ? JSON.stringify(w.reply) : '',
        dedupeTtlMs,
        w.mode === 'set' && w.expireMs !== undefined ? String(Math.max(1, Math.ceil(w.expireMs))) : '',
        w.pushes ?? '',
      ],
    );
    return ok === 1;
  }

  /** Actors of a shard with a timer due before `until` (epoch ms): they must be active to fire it. */
  async dueTimers(shard: number, until: number): Promise<string[]> {
    return this.deps.redis.zrangebyscore(this.deps.keys.timers(shard), '-inf', until, 'LIMIT', 0, 500);
  }

  /** True while `lease` is still current in Redis (used by fencedWrite before external writes). */
  async checkFence(lease: WriterLease): Promise<boolean> {
    const { redis, keys } = this.deps;
    return (
      (await CHECK_FENCE.run<number>(
        redis,
        [keys.lease(lease.shard), keys.epoch(lease.shard)],
        [lease.value, String(lease.epoch)],
      )) === 1
    );
  }
}
