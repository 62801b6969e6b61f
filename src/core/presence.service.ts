import { Types } from 'mongoose';
import type { RedisClient } from '../data/redis.js';
import type { RedisKeys } from '../data/redis-keys.js';
import type { Logger } from '../observability/logger.js';
import { isObjectIdString } from './object-id.js';
import { LastSeenWriter, type LastSeenSink } from './last-seen-writer.js';

/** What presence needs from the user store: lastSeenAt lives on the User document (MongoDB). */
export interface LastSeenStore extends LastSeenSink {
  lastSeenAt(tenant: string, userId: Types.ObjectId): Promise<Date | null | undefined>;
}

export interface PresenceDeps {
  redis: RedisClient;
  keys: Pick<RedisKeys, 'presence' | 'nodeAlive' | 'presenceNodeConnections' | 'presenceNodeIndex'>;
  lastSeen: LastSeenStore;
  logger?: Logger;
  /** How long a node counts as alive after its last heartbeat. */
  nodeTtlMs?: number;
  /** How often coalesced lastSeenAt updates are written (default 1 s). */
  lastSeenFlushMs?: number;
}

export interface PresenceChange {
  tenant: string;
  userId: string;
}

/** Adds a connection; returns 1 when it is the user's first (offline -> online). */
const ADD = `
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 1 and redis.call('SCARD', KEYS[1]) == 1 then return 1 end
return 0`;

/** Removes a connection; returns 1 when it was the user's last (online -> offline). */
const REMOVE = `
local removed = redis.call('SREM', KEYS[1], ARGV[1])
if removed == 1 and redis.call('SCARD', KEYS[1]) == 0 then return 1 end
return 0`;

const SEP = '|';

/**
 * Presence across hub nodes. Each user has a Redis set of `nodeId|socketId` connections; each node has
 * an index of the connections it holds and a heartbeat key with a TTL. A node that dies stops
 * heartbeating; any node's sweep then removes its connections, so presence survives a crash.
 * Online transitions are decided atomically in Redis (Lua), so exactly one caller sees each change.
 */
export class PresenceService {
  private readonly ttlMs: number;
  private readonly lastSeenWriter: LastSeenWriter;

  constructor(private readonly deps: PresenceDeps) {
    this.ttlMs = deps.nodeTtlMs ?? 30_000;
    this.lastSeenWriter = new LastSeenWriter(deps.lastSeen, {
      intervalMs: deps.lastSeenFlushMs ?? 1000,
      logger: deps.logger,
    });
  }

  /**
   * Records a socket of a user on a node; true when the user just came online. The commands go out in
   * this order in one auto-pipelined round trip (the node's index before the user's set, so a crash
   * leaves nothing the sweep cannot find); on a Redis Cluster the keys lie in different slots and go as
   * one pipeline per master, written in the same event-loop turn. lastSeenAt is written shortly after
   * (LastSeenWriter).
   */
  async connected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean> {
    const { redis, keys } = this.deps;
    const [, , , added] = await Promise.all([
      redis.set(keys.nodeAlive(nodeId), String(Date.now()), 'PX', this.ttlMs, 'NX'),
      redis.sadd(keys.presenceNodeIndex, nodeId),
      redis.sadd(keys.presenceNodeConnections(nodeId), [tenant, userId, socketId].join(SEP)),
      redis.eval(ADD, 1, keys.presence(tenant, userId), nodeId + SEP + socketId),
    ]);
    this.lastSeenWriter.note(tenant, userId);
    return added === 1;
  }

  /** Removes a socket of a user; true when it was the user's last connection anywhere. */
  async disconnected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean> {
    const { redis, keys } = this.deps;
    const [, removed] = await Promise.all([
      redis.srem(keys.presenceNodeConnections(nodeId), [tenant, userId, socketId].join(SEP)),
      redis.eval(REMOVE, 1, keys.presence(tenant, userId), nodeId + SEP + socketId),
    ]);
    this.lastSeenWriter.note(tenant, userId);
    return removed === 1;
  }

  /** Writes the lastSeenAt updates noted so far (tests that read lastSeenAt right away). */
  flushLastSeen(): Promise<void> {
    return this.lastSeenWriter.flush();
  }

  /** Shutdown, before MongoDB closes: writes the pending lastSeenAt updates and takes no more. */
  close(): Promise<void> {
    return this.lastSeenWriter.close();
  }

  async isOnline(tenant: string, userId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.keys.presence(tenant, userId))) === 1;
  }

  /** How many sockets the user holds across all nodes (admin connectivity info). */
  async connections(tenant: string, userId: string): Promise<number> {
    return this.deps.redis.scard(this.deps.keys.presence(tenant, userId));
  }

  /** Online ids among `userIds`, in one round trip (contact lists merge this). */
  async onlineMany(tenant: string, userIds: readonly string[]): Promise<Set<string>> {
    if (!userIds.length) return new Set();
    const pipe = this.deps.redis.pipeline();
    for (const id of userIds) pipe.exists(this.deps.keys.presence(tenant, id));
    const res = (await pipe.exec()) ?? [];
    return new Set(userIds.filter((_, i) => res[i]?.[1] === 1));
  }

  /** Last time the user connected or disconnected (MongoDB, User.lastSeenAt); null when never seen. */
  async lastSeen(tenant: string, userId: string): Promise<Date | null> {
    if (!isObjectIdString(userId)) return null;
    return (await this.deps.lastSeen.lastSeenAt(tenant, new Types.ObjectId(userId))) ?? null;
  }

  /**
   * Called by each hub node on a timer shorter than the TTL; keeps its connections alive. The two keys
   * live in different cluster slots, so no transaction: the heartbeat goes first, so a sweep never finds
   * the node indexed without it (decision 860).
   */
  async nodeHeartbeat(nodeId: string): Promise<void> {
    const { redis, keys } = this.deps;
    await redis.set(keys.nodeAlive(nodeId), String(Date.now()), 'PX', this.ttlMs);
    await redis.sadd(keys.presenceNodeIndex, nodeId);
  }

  /**
   * Removes the connections of every node whose heartbeat expired and returns the users that went
   * offline because of it (so the hub pushes userStatus). Safe to run on every node concurrently:
   * the Lua removal reports each transition to exactly one sweeper.
   */
  async sweepDeadNodes(): Promise<PresenceChange[]> {
    const { redis, keys } = this.deps;
    const nodes = await redis.smembers(keys.presenceNodeIndex);
    const changes: PresenceChange[] = [];
    for (const nodeId of nodes) {
      if (await redis.exists(keys.nodeAlive(nodeId))) continue;
      changes.push(...(await this.removeNode(nodeId)));
    }
    return changes;
  }

  private async removeNode(nodeId: string): Promise<PresenceChange[]> {
    const { redis, keys } = this.deps;
    const setKey = keys.presenceNodeConnections(nodeId);
    const changes: PresenceChange[] = [];
    for (const member of await redis.smembers(setKey)) {
      const [tenant, userId, socketId] = member.split(SEP);
      if (!tenant || !userId || !socketId) continue;
      await redis.srem(setKey, member);
      const last = (await redis.eval(REMOVE, 1, keys.presence(tenant, userId), nodeId + SEP + socketId)) === 1;
      if (last) {
        changes.push({ tenant, userId });
        this.lastSeenWriter.note(tenant, userId);
      }
    }
    if ((await redis.scard(setKey)) === 0) await redis.srem(keys.presenceNodeIndex, nodeId);
    this.deps.logger?.info({ component: 'presence', nodeId, wentOffline: changes.length }, 'swept dead node');
    return changes;
  }
}
