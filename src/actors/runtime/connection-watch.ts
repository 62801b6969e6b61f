import type { Redis } from 'ioredis';
import { primaries, type RedisClient } from '../../data/redis.js';
import type { Logger } from '../../observability/logger.js';
import { monotonicNow } from './shard-leases.js';
import { inboxConnectionName } from './transport.js';

/** Consecutive polls a seen node's inbox connection must be absent on before the node is evicted. */
export const MISSES_TO_EVICT = 2;
/** How often at most a full listing is taken only to find members not seen yet (they cannot be evicted). */
const UNSEEN_RELIST_MS = 1000;

export interface ConnectionWatchDeps {
  /** The node's command connection: on a cluster, every master is asked. */
  redis: RedisClient;
  nodeId: string;
  logger: Logger;
  /** The hosting nodes this node knows of (its cached membership). */
  members(): readonly string[];
  /** Evicts a node found crashed (membership, leases, routes). */
  evict(node: string): Promise<void>;
  /** A seen node's inbox connection was absent on `misses` consecutive polls. */
  missed?(node: string, misses: number): void;
}

interface Listed {
  id: string;
  name: string;
}

/**
 * Tells a crashed node from Redis itself instead of waiting out its lease (decision 1116). When a
 * process dies its kernel closes its sockets and Redis drops its connections at once, while a node
 * that is merely slow (stalled event loop, frozen process) keeps them. Each poll lists the client
 * connections of Redis (every master of a cluster) and looks for each member's inbox connection, which
 * carries its node id (`inboxConnectionName`). A member whose connection was seen since this node's
 * own connection last (re)connected, and is then absent on MISSES_TO_EVICT consecutive polls, is
 * evicted: a reconnect of ioredis (first retry after 100 ms) spans at most one poll. A member never
 * seen (its connection not named so) is never evicted here; its lease still ends it.
 *
 * A poll asks only for the client ids it already knows (`CLIENT LIST ID`, a few lines), and lists
 * every normal client only when a known one is missing (a reconnect or a crash) or, at most once a
 * second, to find members not seen yet.
 */
export class ConnectionWatch {
  private seen = new Set<string>();
  private misses = new Map<string, number>();
  private ids = new Map<string, string>();
  private lastFullAt = Number.NEGATIVE_INFINITY;
  private session?: string;
  private closes = 0;
  private readonly hooked = new Set<Redis>();
  private readonly onClose = () => this.closes++;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<string[]>;
  private disabled = false;

  constructor(private readonly deps: ConnectionWatchDeps) {}

  /** Polls every `intervalMs` (0: never by itself; `poll()` still works). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (!this.disabled) this.poll().catch(() => undefined);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const r of this.hooked) r.off('close', this.onClose);
    this.hooked.clear();
  }

  /** True once `node`'s inbox connection was seen (since this node's last reconnect): it can be evicted. */
  sees(node: string): boolean {
    return this.seen.has(node);
  }

  /** One poll (never two at once); resolves with the nodes it found crashed and evicted (or will retry). */
  poll(): Promise<string[]> {
    this.polling ??= this.pollOnce().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pollOnce(): Promise<string[]> {
    const members = this.deps.members().filter((n) => n !== this.deps.nodeId);
    this.prune(members);
    if (!members.length) return [];
    const servers = primaries(this.deps.redis);
    const session = this.sessionOf(servers);
    if (session !== this.session) this.reset();
    let present: Set<string>;
    try {
      present = await this.present(servers, members);
    } catch (err) {
      this.reset();
      this.session = undefined;
      if (/NOPERM/i.test((err as Error).message)) {
        this.disabled = true;
        this.logger().warn(
          { err: (err as Error).message },
          'CLIENT LIST refused: crashed nodes are found by lease expiry only',
        );
      }
      return [];
    }
    // This node's own connection closed during the poll (Redis restarted?): judge nothing on it.
    if (this.sessionOf(servers) !== session) {
      this.reset();
      this.session = undefined;
      return [];
    }
    this.session = session;
    const evict: string[] = [];
    for (const m of members) {
      if (present.has(m)) {
        this.seen.add(m);
        this.misses.delete(m);
        continue;
      }
      this.ids.delete(m);
      if (!this.seen.has(m)) continue;
      const misses = (this.misses.get(m) ?? 0) + 1;
      this.deps.missed?.(m, misses);
      if (misses < MISSES_TO_EVICT) {
        this.misses.set(m, misses);
        continue;
      }
      this.seen.delete(m);
      this.misses.delete(m);
      evict.push(m);
    }
    for (const node of evict)
      await this.deps.evict(node).catch((err) => {
        // Tried again on the next poll that misses it.
        this.seen.add(node);
        this.misses.set(node, MISSES_TO_EVICT - 1);
        this.logger().warn({ node, err: (err as Error).message }, 'evicting a crashed node failed');
      });
    return evict;
  }

  /** The members whose inbox connection Redis lists now. */
  private async present(servers: Redis[], members: string[]): Promise<Set<string>> {
    const byName = new Map(members.map((m) => [inboxConnectionName(m), m]));
    const present = new Set<string>();
    const note = (listed: Listed[]) => {
      for (const c of listed) {
        const m = byName.get(c.name);
        if (m === undefined) continue;
        this.ids.set(m, c.id);
        present.add(m);
      }
    };
    const known = members.filter((m) => this.ids.has(m));
    if (known.length) {
      // Client ids are per server: a line counts only with the member's name and the id known for it.
      const ids = known.map((m) => this.ids.get(m)!);
      const lists = await Promise.all(servers.map((s) => s.call('CLIENT', 'LIST', 'ID', ...ids)));
      note(lists.flatMap((l) => parseClientList(String(l))).filter((c) => this.ids.get(byName.get(c.name)!) === c.id));
    }
    const seenMissing = members.some((m) => this.seen.has(m) && !present.has(m));
    const unseen = members.some((m) => !this.seen.has(m) && !present.has(m));
    const now = monotonicNow();
    if (seenMissing || (unseen && now - this.lastFullAt >= UNSEEN_RELIST_MS)) {
      this.lastFullAt = now;
      const lists = await Promise.all(servers.map((s) => s.call('CLIENT', 'LIST', 'TYPE', 'normal')));
      note(lists.flatMap((l) => parseClientList(String(l))));
    }
    return present;
  }

  /**
   * Which connections of this node polls ran on: the count of their closes and the masters asked.
   * A change means this node reconnected (every connection drops when Redis restarts, and others may
   * reconnect later than this one) or the cluster's masters changed: what was seen before counts no more.
   */
  private sessionOf(servers: Redis[]): string {
    for (const s of servers)
      if (!this.hooked.has(s)) {
        this.hooked.add(s);
        s.on('close', this.onClose);
      }
    const addrs = servers.map((s) => `${s.options.host}:${s.options.port}`).sort();
    return `${this.closes}|${addrs.join(',')}`;
  }

  private reset(): void {
    this.seen.clear();
    this.misses.clear();
    this.ids.clear();
    this.lastFullAt = Number.NEGATIVE_INFINITY;
  }

  private prune(members: string[]): void {
    const live = new Set(members);
    for (const m of this.seen) if (!live.has(m)) this.seen.delete(m);
    for (const m of this.misses.keys()) if (!live.has(m)) this.misses.delete(m);
    for (const m of this.ids.keys()) if (!live.has(m)) this.ids.delete(m);
  }

  private logger(): Logger {
    return this.deps.logger;
  }
}

/** The id and name of each line of a `CLIENT LIST` reply (names never contain spaces). */
export function parseClientList(reply: string): Listed[] {
  const out: Listed[] = [];
  for (const line of reply.split('\n')) {
    let id = '';
    let name = '';
    for (const field of line.trim().split(' ')) {
      if (field.startsWith('id=')) id = field.slice(3);
      else if (field.startsWith('name=')) name = field.slice(5);
    }
    if (id && name) out.push({ id, name });
  }
  return out;
}
