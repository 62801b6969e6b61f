import { primaries, type RedisClient } from '../../../src/data/redis.js';
import type { ChaosCluster } from './chaos-cluster.js';

/**
 * The fleet day's resource figures: Redis keys under the test's prefix by shape, and per serving node
 * its connected sockets, active actors and memory (from its /metrics).
 */

/**
 * A key's shape: the key without the prefix, each id replaced by what it stands for, so that keys of one
 * kind count together (`push:{acme:u:<id>}`, `actors:{s<n>}:snap:acme/call/<uuid>`).
 */
export function shapeOf(key: string, prefix: string): string {
  return key
    .slice(prefix.length)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\b[0-9a-f]{24}\b/g, '<id>')
    .replace(/[a-z]+-\d+-g\d+/g, '<node>')
    .replace(/emb_[0-9a-f]{32}/g, 'emb_<hex>')
    .replace(/HS-FLEET-\d+/g, 'HS-FLEET-<n>')
    .replace(/\{s\d+\}/g, '{s<n>}')
    .replace(/(session|revoked|jti):[A-Za-z0-9_-]{10,}/g, '$1:<sid>')
    .replace(/\d{6,}/g, '<n>');
}

/** Keys under `prefix` by shape, on every primary (one server, or each master of a cluster). */
export async function keyCensus(redis: RedisClient, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const r of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const k of keys) {
        const s = shapeOf(k, prefix);
        out.set(s, (out.get(s) ?? 0) + 1);
      }
      cursor = next;
    } while (cursor !== '0');
  }
  return out;
}

/** Of the keys of one shape: how many, how many never expire, and the longest time to live left (ms). */
export interface ShapeFigures {
  count: number;
  lasting: number;
  maxTtlMs: number;
  /** Up to 8 of the keys that never expire (full names), for a leak's report. */
  lastingKeys?: string[];
}

/** Keys under `prefix` by shape with their expiry figures, on every primary. */
export async function keyExpiries(redis: RedisClient, prefix: string): Promise<Map<string, ShapeFigures>> {
  const out = new Map<string, ShapeFigures>();
  for (const r of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      const ttls = keys.length ? await Promise.all(keys.map((k) => r.pttl(k))) : [];
      keys.forEach((k, i) => {
        const s = shapeOf(k, prefix);
        const f = out.get(s) ?? { count: 0, lasting: 0, maxTtlMs: 0 };
        const ttl = ttls[i]!;
        f.count++;
        if (ttl === -1) {
          f.lasting++;
          if ((f.lastingKeys ??= []).length < 8) f.lastingKeys.push(k);
        } else f.maxTtlMs = Math.max(f.maxTtlMs, ttl);
        out.set(s, f);
      });
      cursor = next;
    } while (cursor !== '0');
  }
  return out;
}

/** A shape of key that stays after the traffic that made it, with how many of it may exist. */
export interface Retained {
  shape: RegExp;
  /** What bounds it (said in the verdict). */
  by: string;
  max: number;
}

/**
 * The keys the day left behind, judged: a shape that grew since `before` must either expire by itself
 * within `maxTtlMs` (every key of it has a time to live), or be one of `retained` within its bound.
 * Anything else grows with traffic and stays: a leak. A retained shape's bound counts the keys that stay:
 * those of it that expire within `maxTtlMs` go by themselves (a meeting's snapshot once it ended), unless
 * one of them outlives the window, when every key of the shape counts.
 */
export function judgeKeys(
  before: Map<string, number>,
  after: Map<string, ShapeFigures>,
  maxTtlMs: number,
  retained: Retained[],
): {
  expiring: Record<string, { count: number; maxTtlMs: number }>;
  retained: Record<string, string>;
  leaked: Record<string, ShapeFigures & { before: number }>;
} {
  const expiring: Record<string, { count: number; maxTtlMs: number }> = {};
  const kept: Record<string, string> = {};
  const leaked: Record<string, ShapeFigures & { before: number }> = {};
  const counts = new Map<Retained, number>();
  for (const [shape, f] of after) {
    const was = before.get(shape) ?? 0;
    if (f.count <= was) continue;
    if (f.lasting === 0 && f.maxTtlMs <= maxTtlMs) {
      expiring[shape] = { count: f.count - was, maxTtlMs: f.maxTtlMs };
      continue;
    }
    const r = retained.find((x) => x.shape.test(shape));
    if (r) counts.set(r, (counts.get(r) ?? 0) + (f.maxTtlMs <= maxTtlMs ? f.lasting : f.count));
    else leaked[shape] = { ...f, before: was };
  }
  for (const [r, n] of counts) {
    kept[String(r.shape)] = `${n} of at most ${r.max} (${r.by})`;
    if (n > r.max) leaked[String(r.shape)] = { count: n, lasting: n, maxTtlMs: -1, before: r.max };
  }
  return { expiring, retained: kept, leaked };
}

/** What a key holds, by its type (a string's value, a set's first members...), for a leak's report. */
export async function describeKey(redis: RedisClient, key: string): Promise<string> {
  const type = await redis.type(key);
  const held =
    type === 'string'
      ? await redis.get(key)
      : type === 'set'
        ? (await redis.sscan(key, '0', 'COUNT', 20))[1].slice(0, 10).join(', ')
        : type === 'hash'
          ? JSON.stringify(await redis.hgetall(key))
          : type === 'zset'
            ? (await redis.zrange(key, 0, 9)).join(', ')
            : type === 'list'
              ? (await redis.lrange(key, 0, 9)).join(', ')
              : '';
  return `${type}: ${String(held).slice(0, 600)}`;
}

/** Keys under `prefix` whose shape is `shape`, with their remaining time to live (ms; -1: none). */
export async function keysOfShape(
  redis: RedisClient,
  prefix: string,
  shape: string,
  limit = 5,
): Promise<{ key: string; pttl: number }[]> {
  const out: { key: string; pttl: number }[] = [];
  for (const r of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const k of keys)
        if (shapeOf(k, prefix) === shape && out.length < limit) out.push({ key: k, pttl: await r.pttl(k) });
      cursor = next;
    } while (cursor !== '0' && out.length < limit);
  }
  return out;
}

/** Shapes whose count differs between two censuses: `{ shape: [before, after] }`. */
export function censusDiff(before: Map<string, number>, after: Map<string, number>): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const s of new Set([...before.keys(), ...after.keys()])) {
    const [a, b] = [before.get(s) ?? 0, after.get(s) ?? 0];
    if (a !== b) out[s] = [a, b];
  }
  return out;
}

export interface NodeFigures {
  node: string;
  sockets: number;
  /** Presence updates and disconnect work started and not finished (hub_follow_ups_in_flight). */
  followUps: number;
  /** Engine.IO connections open, admitted or still in their handshake (hub_transports_open). */
  transports: number;
  actors: number;
  rssMb: number;
  heapMb: number;
}

/** Sockets, active actors and memory of every serving node (from its /metrics). */
export async function nodeFigures(cluster: ChaosCluster): Promise<NodeFigures[]> {
  const out: NodeFigures[] = [];
  for (const { slot, id } of cluster.servingIds()) {
    const [sockets, followUps, transports, actors, rss, heap] = await Promise.all([
      cluster.counter(slot, 'hub_connected_sockets'),
      cluster.counter(slot, 'hub_follow_ups_in_flight'),
      cluster.counter(slot, 'hub_transports_open'),
      cluster.counter(slot, 'actor_activations_live'),
      cluster.counter(slot, 'process_resident_memory_bytes'),
      cluster.counter(slot, 'nodejs_heap_size_used_bytes'),
    ]);
    out.push({
      node: id,
      sockets,
      followUps,
      transports,
      actors,
      rssMb: Math.round(rss / 2 ** 20),
      heapMb: Math.round(heap / 2 ** 20),
    });
  }
  return out;
}

export const sum = (xs: NodeFigures[], k: 'sockets' | 'followUps' | 'transports' | 'actors' | 'rssMb' | 'heapMb') =>
  xs.reduce((n, x) => n + x[k], 0);

/**
 * What every incarnation of the cluster logged that the day must not produce: a 5xx answer, an unhandled
 * promise rejection, an uncaught exception, a failed hub method (logged when it answers `internal` or a
 * 5xx code), a connection joined without the replay of its push stream, a fatal line; and anything on stderr.
 */
/**
 * Every incarnation's `slow actor turn` lines (ACTOR_SLOW_TURN_MS): not a verdict, the context of one. A
 * hub call that failed `no reply from node` or `timeout` waited behind such a turn on the node it asked.
 */
export function slowTurns(cluster: ChaosCluster): string[] {
  const out: string[] = [];
  for (const { id, node } of cluster.incarnations)
    for (const l of node.logs)
      if (l.msg === 'slow actor turn')
        out.push(`${id}: ${[l.time, l.actor, l.message, `${l.ms} ms`, l.outcome, `${l.waiting} waiting`].join(' ')}`);
  return out;
}

export function nodeFindings(cluster: ChaosCluster): string[] {
  const out: string[] = [];
  for (const { id, node } of cluster.incarnations) {
    for (const l of node.logs) {
      const status = typeof l.status === 'number' ? l.status : 0;
      const bad =
        status >= 500 ||
        l.msg === 'unhandled promise rejection' ||
        String(l.msg).startsWith('uncaught exception') ||
        l.msg === 'hub method failed' ||
        l.msg === 'request failed' ||
        // A connection whose user's stream could not be read is joined without its replay: what it
        // missed while away is lost to it until its next reconnection.
        l.msg === 'push history unavailable at connection' ||
        (typeof l.level === 'number' && l.level >= 60);
      if (bad) out.push(`${id}: ${JSON.stringify(l).slice(0, 400)}`);
    }
    const err = node.stderr().trim();
    if (err) out.push(`${id} stderr: ${err.slice(0, 400)}`);
  }
  return out;
}
