import { Types } from 'mongoose';
import type { NodeConnection, PresenceStore } from '../../data/stores/presence.store.js';
import type { Logger } from '../../observability/logger.js';
import { isObjectIdString } from '../../kernel/object-id.js';
import { LastSeenWriter, type LastSeenSink } from './last-seen-writer.js';

/** What presence needs from the user store: lastSeenAt lives on the User document (MongoDB). */
export interface LastSeenStore extends LastSeenSink {
  lastSeenAt(tenant: string, userId: Types.ObjectId): Promise<Date | null | undefined>;
}

export interface PresenceDeps {
  /** Connections per user and per node, node heartbeats (Redis, shared by every node). */
  store: PresenceStore;
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
   * Records a socket of a user on a node; true when the user just came online (one round trip, the
   * node's index before the user's set: PresenceStore.addConnection). lastSeenAt is written shortly
   * after (LastSeenWriter).
   */
  async connected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean> {
    const added = await this.deps.store.addConnection({ tenant, userId, socketId }, nodeId, this.ttlMs);
    this.lastSeenWriter.note(tenant, userId);
    return added;
  }

  /** Removes a socket of a user; true when it was the user's last connection anywhere. */
  async disconnected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean> {
    const removed = await this.deps.store.removeConnection({ tenant, userId, socketId }, nodeId);
    this.lastSeenWriter.note(tenant, userId);
    return removed;
  }

  /** Writes the lastSeenAt updates noted so far (tests that read lastSeenAt right away). */
  flushLastSeen(): Promise<void> {
    return this.lastSeenWriter.flush();
  }

  /** Shutdown, before MongoDB closes: writes the pending lastSeenAt updates and takes no more. */
  close(): Promise<void> {
    return this.lastSeenWriter.close();
  }

  isOnline(tenant: string, userId: string): Promise<boolean> {
    return this.deps.store.isOnline(tenant, userId);
  }

  /** How many sockets the user holds across all nodes (admin connectivity info). */
  connections(tenant: string, userId: string): Promise<number> {
    return this.deps.store.connectionCount(tenant, userId);
  }

  /** Online ids among `userIds`, in one round trip (contact lists merge this). */
  onlineMany(tenant: string, userIds: readonly string[]): Promise<Set<string>> {
    return this.deps.store.onlineMany(tenant, userIds);
  }

  /** Last time the user connected or disconnected (MongoDB, User.lastSeenAt); null when never seen. */
  async lastSeen(tenant: string, userId: string): Promise<Date | null> {
    if (!isObjectIdString(userId)) return null;
    return (await this.deps.lastSeen.lastSeenAt(tenant, new Types.ObjectId(userId))) ?? null;
  }

  /** Called by each hub node on a timer shorter than the TTL; keeps its connections alive. */
  nodeHeartbeat(nodeId: string): Promise<void> {
    return this.deps.store.heartbeat(nodeId, this.ttlMs);
  }

  /**
   * Removes the connections of every node whose heartbeat expired and returns the users that went
   * offline because of it (so the hub pushes userStatus). Safe to run on every node concurrently:
   * the Lua removal reports each transition to exactly one sweeper.
   */
  async sweepDeadNodes(): Promise<PresenceChange[]> {
    const { store } = this.deps;
    const nodes = await store.indexedNodes();
    const changes: PresenceChange[] = [];
    for (const nodeId of nodes) {
      if (await store.isNodeAlive(nodeId)) continue;
      changes.push(...(await this.removeNode(nodeId)));
    }
    return changes;
  }

  /**
   * Removes the connections listed for a live node (`nodeId`, the caller's own) that it no longer
   * holds: a disconnect whose removal could not be written, or a connection listed again after its
   * removal. `holds` answers for a socket id from before its add is sent until its removal has run, so
   * an entry it does not hold is one whose removal ran or failed; removing it again is idempotent.
   * Returns the users that went offline because of it. The list is read in pages (SSCAN), not at once.
   */
  async releaseStale(nodeId: string, holds: (socketId: string) => boolean): Promise<PresenceChange[]> {
    const changes: PresenceChange[] = [];
    for await (const page of this.deps.store.scanNodeConnections(nodeId))
      changes.push(
        ...(await this.removeListed(
          nodeId,
          page.filter((c) => !holds(c.socketId)),
        )),
      );
    if (changes.length)
      this.deps.logger?.warn(
        { component: 'presence', nodeId, wentOffline: changes.length },
        'released connections this node no longer holds',
      );
    return changes;
  }

  private async removeNode(nodeId: string): Promise<PresenceChange[]> {
    const changes = await this.removeListed(nodeId, await this.deps.store.nodeConnections(nodeId));
    await this.deps.store.forgetNodeIfEmpty(nodeId);
    this.deps.logger?.info({ component: 'presence', nodeId, wentOffline: changes.length }, 'swept dead node');
    return changes;
  }

  /** Removes listed connections of a node, one by one; the users for whom each was the last. */
  private async removeListed(nodeId: string, list: NodeConnection[]): Promise<PresenceChange[]> {
    const changes: PresenceChange[] = [];
    for (const c of list) {
      if (await this.deps.store.removeDeadConnection(c, nodeId)) {
        changes.push({ tenant: c.tenant, userId: c.userId });
        this.lastSeenWriter.note(c.tenant, c.userId);
      }
    }
    return changes;
  }
}
