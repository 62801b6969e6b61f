import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

/** Adds a connection; returns 1 when it is the user's first (offline -> online). */
const ADD = new LuaScript(`
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 1 and redis.call('SCARD', KEYS[1]) == 1 then return 1 end
return 0`);

/** Removes a connection; returns 1 when it was the user's last (online -> offline). */
const REMOVE = new LuaScript(`
local removed = redis.call('SREM', KEYS[1], ARGV[1])
if removed == 1 and redis.call('SCARD', KEYS[1]) == 0 then return 1 end
return 0`);

/** For each key, 1 when it exists (a user's presence set: online), else 0. The keys share the tenant's slot. */
const EACH_EXISTS = new LuaScript(`
local out = {}
for i = 1, #KEYS do out[i] = redis.call('EXISTS', KEYS[i]) end
return out`);

const SEP = '|';

/** One socket of a user held by a hub node. */
export interface PresenceConnection {
  tenant: string;
  userId: string;
  socketId: string;
}

/** A connection as listed in its node's set: `entry` is the stored member, removed as it is. */
export interface NodeConnection extends PresenceConnection {
  readonly entry: string;
}

/**
 * Presence as stored in Redis: each user has a set of `nodeId|socketId` connections (redis-keys
 * `presence`); each node has a set of the `tenant|userId|socketId` connections it holds
 * (`presenceNodeConnections`), a heartbeat key with a time to live (`nodeAlive`), and is listed in the
 * index of nodes (`presenceNodeIndex`). A user's first and last connection are decided by one script
 * each, so exactly one caller sees each change. When a node counts as dead and what follows is
 * src/core/directory/presence.service.ts's.
 */
export class PresenceStore {
  constructor(
    private readonly deps: {
      redis: RedisClient;
      keys: Pick<RedisKeys, 'presence' | 'nodeAlive' | 'presenceNodeConnections' | 'presenceNodeIndex'>;
    },
  ) {}

  /**
   * Records a socket of a user on a node; true when it is the user's first connection. The commands go
   * out in this order in one auto-pipelined round trip (the node's heartbeat if it has none, the node
   * index, the node's set, then the user's set, so a crash leaves nothing a sweep cannot find); on a
   * Redis Cluster the keys lie in different slots and go as one pipeline per master, written in the same
   * event-loop turn.
   */
  async addConnection(c: PresenceConnection, nodeId: string, heartbeatTtlMs: number): Promise<boolean> {
    const { redis, keys } = this.deps;
    const [, , , added] = await Promise.all([
      redis.set(keys.nodeAlive(nodeId), String(Date.now()), 'PX', heartbeatTtlMs, 'NX'),
      redis.sadd(keys.presenceNodeIndex, nodeId),
      redis.sadd(keys.presenceNodeConnections(nodeId), member(c)),
      ADD.eval(redis, 1, keys.presence(c.tenant, c.userId), nodeId + SEP + c.socketId),
    ]);
    return added === 1;
  }

  /** Removes a socket of a user from its node's set and the user's set (one round trip); true when it was the user's last. */
  async removeConnection(c: PresenceConnection, nodeId: string): Promise<boolean> {
    const { redis, keys } = this.deps;
    const [, removed] = await Promise.all([
      redis.srem(keys.presenceNodeConnections(nodeId), member(c)),
      REMOVE.eval(redis, 1, keys.presence(c.tenant, c.userId), nodeId + SEP + c.socketId),
    ]);
    return removed === 1;
  }

  /**
   * Removes a connection of a node found dead: first from the node's set, then from the user's set;
   * true when it was the user's last.
   */
  async removeDeadConnection(c: NodeConnection, nodeId: string): Promise<boolean> {
    const { redis, keys } = this.deps;
    await redis.srem(keys.presenceNodeConnections(nodeId), c.entry);
    return (await REMOVE.eval(redis, 1, keys.presence(c.tenant, c.userId), nodeId + SEP + c.socketId)) === 1;
  }

  async isOnline(tenant: string, userId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.keys.presence(tenant, userId))) === 1;
  }

  /** How many sockets the user holds across all nodes. */
  connectionCount(tenant: string, userId: string): Promise<number> {
    return this.deps.redis.scard(this.deps.keys.presence(tenant, userId));
  }

  /**
   * Online ids among `userIds`: one script over their presence sets (the tenant's slot), where a
   * pipeline of one EXISTS per user made a command, a promise and a reply object per user on every
   * contact page (B6 at 1,000,000 users: a fifth of what a node's searches kept past two scavenges).
   */
  async onlineMany(tenant: string, userIds: readonly string[]): Promise<Set<string>> {
    if (!userIds.length) return new Set();
    const keys = userIds.map((id) => this.deps.keys.presence(tenant, id));
    const res = (await EACH_EXISTS.run<number[]>(this.deps.redis, keys, [])) ?? [];
    const online = new Set<string>();
    for (let i = 0; i < userIds.length; i++) if (res[i] === 1) online.add(userIds[i]!);
    return online;
  }

  /**
   * A node's heartbeat for `ttlMs`, then its entry in the node index. The two keys live in different
   * cluster slots, so no transaction: the heartbeat goes first, so a sweep never finds the node indexed
   * without it (decision 860).
   */
  async heartbeat(nodeId: string, ttlMs: number): Promise<void> {
    const { redis, keys } = this.deps;
    await redis.set(keys.nodeAlive(nodeId), String(Date.now()), 'PX', ttlMs);
    await redis.sadd(keys.presenceNodeIndex, nodeId);
  }

  /** The nodes that hold (or held) connections. */
  indexedNodes(): Promise<string[]> {
    return this.deps.redis.smembers(this.deps.keys.presenceNodeIndex);
  }

  /** Whether the node's heartbeat has not expired. */
  async isNodeAlive(nodeId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.keys.nodeAlive(nodeId))) > 0;
  }

  /** The connections a node holds (malformed entries left out). */
  async nodeConnections(nodeId: string): Promise<NodeConnection[]> {
    return parseEntries(await this.deps.redis.smembers(this.deps.keys.presenceNodeConnections(nodeId)));
  }

  /**
   * The connections listed for a node, in pages of about `count` (SSCAN: a live node's list is read
   * without holding Redis for the whole of it; an entry may come twice, each once at least).
   */
  async *scanNodeConnections(nodeId: string, count = 500): AsyncGenerator<NodeConnection[]> {
    const key = this.deps.keys.presenceNodeConnections(nodeId);
    let cursor = '0';
    do {
      const [next, entries] = await this.deps.redis.sscan(key, cursor, 'COUNT', count);
      if (entries.length) yield parseEntries(entries);
      cursor = next;
    } while (cursor !== '0');
  }

  /** Takes the node out of the index once it holds no connection. */
  async forgetNodeIfEmpty(nodeId: string): Promise<void> {
    const { redis, keys } = this.deps;
    if ((await redis.scard(keys.presenceNodeConnections(nodeId))) === 0)
      await redis.srem(keys.presenceNodeIndex, nodeId);
  }
}

function parseEntries(entries: string[]): NodeConnection[] {
  const out: NodeConnection[] = [];
  for (const entry of entries) {
    const [tenant, userId, socketId] = entry.split(SEP);
    if (tenant && userId && socketId) out.push({ tenant, userId, socketId, entry });
  }
  return out;
}

function member(c: PresenceConnection): string {
  return [c.tenant, c.userId, c.socketId].join(SEP);
}
