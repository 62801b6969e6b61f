import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ActorAddress } from './types.js';
import { fromZod } from '../../kernel/errors.js';

/** Wire schema of an address; every message crossing Redis is checked against it. */
export const ActorAddressSchema = z.object({
  tenant: z.string().min(1).max(100),
  kind: z.enum(['call', 'meeting', 'device']),
  id: z.string().min(1).max(200),
});

const KINDS: ReadonlySet<unknown> = new Set(ActorAddressSchema.shape.kind.options);

/**
 * The address an ask was given, checked against ActorAddressSchema and reduced to its three fields. The
 * same rules by hand on the fast path (every ask runs this; zod showed in B1's profile); zod for the
 * field-level error otherwise.
 */
export function checkedAddress(a: ActorAddress): ActorAddress {
  const { tenant, kind, id } = (a ?? {}) as Partial<ActorAddress>;
  if (
    typeof tenant === 'string' &&
    tenant.length >= 1 &&
    tenant.length <= 100 &&
    KINDS.has(kind) &&
    typeof id === 'string' &&
    id.length >= 1 &&
    id.length <= 200
  ) {
    return { tenant, kind: kind!, id };
  }
  const parsed = ActorAddressSchema.safeParse(a);
  if (!parsed.success) throw fromZod(parsed.error, 'to');
  return parsed.data;
}

/** The identity string the runtime shards on and names snapshots by. */
export function addressKey(a: ActorAddress): string {
  return `${a.tenant}/${a.kind}/${a.id}`;
}

/** Inverse of addressKey (tenant names and kinds never contain '/'; ids may). */
export function parseAddressKey(key: string): ActorAddress | undefined {
  const [tenant, kind, ...rest] = key.split('/');
  const parsed = ActorAddressSchema.safeParse({ tenant, kind, id: rest.join('/') });
  return parsed.success ? parsed.data : undefined;
}

function hash32(s: string): number {
  return createHash('sha1').update(s).digest().readUInt32BE(0);
}

/**
 * Stable shard of an address: a hash that does not depend on the process or Node version, so every
 * node agrees. The shard count must stay fixed for a deployment (epochs are per shard).
 */
export function shardOf(a: ActorAddress, shards: number): number {
  return shardOfKey(addressKey(a), shards);
}

/** shardOf for an address already made into its key (addressKey). */
export function shardOfKey(key: string, shards: number): number {
  let hash = hashMemo.get(key);
  if (hash === undefined) {
    hash = hash32(key);
    if (hashMemo.size >= SHARD_MEMO_MAX) hashMemo.delete(hashMemo.keys().next().value!);
    hashMemo.set(key, hash);
  }
  return hash % shards;
}

/** Hashes of recently addressed actors' keys: a pure function's results, bounded (a SHA-1 per message showed in B1's profile). */
const hashMemo = new Map<string, number>();
const SHARD_MEMO_MAX = 50_000;

/**
 * Rendezvous (highest random weight) owner of a shard among live nodes: deterministic on every node
 * that sees the same membership, and a join or leave moves only about 1/N of the shards.
 */
export function rendezvousOwner(shard: number, nodes: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const node of nodes) {
    const score = scoreOf(`${shard}|${node}`);
    if (score > bestScore || (score === bestScore && best !== undefined && node < best)) {
      best = node;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Rendezvous scores of (shard, node) pairs: a pure function's results, bounded. Every node's lease timer
 * scores every shard against every member each tick (256 shards x the members, a SHA-1 each), which showed
 * in a calm node's profile (B12); the members change rarely, so the pairs repeat.
 */
function scoreOf(pair: string): number {
  let score = scoreMemo.get(pair);
  if (score === undefined) {
    score = hash32(pair);
    if (scoreMemo.size >= SCORE_MEMO_MAX) scoreMemo.delete(scoreMemo.keys().next().value!);
    scoreMemo.set(pair, score);
  }
  return score;
}

const scoreMemo = new Map<string, number>();
const SCORE_MEMO_MAX = 16_384;
