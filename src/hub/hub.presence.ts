import type { Logger } from '../observability/logger.js';
import { rooms } from '../realtime/rooms.js';
import { FollowUps } from './follow-ups.js';
import type { HubServer, HubSocket } from './hub.types.js';

/** The presence service calls the hub makes (the directory's PresenceService satisfies it). */
export interface PresencePort {
  connected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean>;
  disconnected(tenant: string, userId: string, nodeId: string, socketId: string): Promise<boolean>;
  nodeHeartbeat(nodeId: string): Promise<void>;
  sweepDeadNodes(): Promise<{ tenant: string; userId: string }[]>;
  releaseStale(nodeId: string, holds: (socketId: string) => boolean): Promise<{ tenant: string; userId: string }[]>;
}

/**
 * Presence on the hub: counts connections across nodes (in Redis, through the presence service) and
 * pushes userStatus on each online/offline transition to the tenant's presence room (staff, and patients
 * who may see everyone); patients limited to their care team get it through the presence rooms of the
 * people they may see. A node heartbeat keeps this node's connections alive; the sweep removes a dead
 * node's and announces who went offline. With each heartbeat the node also takes off what Redis still
 * lists for it and it no longer holds: a removal its disconnect could not write (Redis unreachable for
 * that moment) would otherwise count the user online for as long as the node lives.
 */
export class HubPresence {
  private timer?: NodeJS.Timeout;
  /** The sockets this node holds on presence: from before their add is sent until their removal ran. */
  private readonly held = new Set<string>();

  constructor(
    private readonly io: HubServer,
    private readonly presence: PresencePort,
    private readonly nodeId: string,
    private readonly logger: Logger,
    /** Where its updates in flight are tracked (the hub's, shared with the other disconnect work). */
    private readonly followUps: FollowUps = new FollowUps(),
  ) {}

  async start(intervalMs: number): Promise<void> {
    await this.presence.nodeHeartbeat(this.nodeId);
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Waits for presence updates in flight (shutdown: before Redis closes). */
  async drain(): Promise<void> {
    await this.followUps.settled();
  }

  onConnect(socket: HubSocket): Promise<void> {
    const { tenant, principal } = socket.data;
    this.held.add(socket.id);
    return this.track(async () => {
      if (await this.presence.connected(tenant, principal.userId, this.nodeId, socket.id))
        this.push(tenant, principal.userId, true);
    });
  }

  onDisconnect(socket: HubSocket): Promise<void> {
    const { tenant, principal } = socket.data;
    return this.track(async () => {
      try {
        if (await this.presence.disconnected(tenant, principal.userId, this.nodeId, socket.id))
          this.push(tenant, principal.userId, false);
      } finally {
        // Released even when the removal failed: the next heartbeat's reconciliation removes it then.
        this.held.delete(socket.id);
      }
    });
  }

  private track(work: () => Promise<void>): Promise<void> {
    return this.followUps.track(work());
  }

  private push(tenant: string, userId: string, online: boolean): void {
    const status = { userId, online, at: new Date().toISOString() };
    // Staff (and patients of tenants whose patients see everyone) through the tenant's presence room;
    // patients limited to their care team only through the rooms of the people they may see (decision
    // 230). A room of its own, not the tenant room less its patients: each node applies a broadcast by
    // walking its sockets in the rooms and in the exception, every socket of the tenant (decision 1143).
    this.io.to(rooms.tenantPresence(tenant)).emit('userStatus', status);
    this.io.to(rooms.presenceOf(tenant, userId)).emit('userStatus', status);
  }

  /** One heartbeat: this node's, the sweep of dead nodes, then this node's own list reconciled (tests call it). */
  async tick(): Promise<void> {
    try {
      await this.presence.nodeHeartbeat(this.nodeId);
      for (const gone of await this.presence.sweepDeadNodes()) this.push(gone.tenant, gone.userId, false);
      const held = this.held;
      for (const gone of await this.presence.releaseStale(this.nodeId, (id) => held.has(id)))
        this.push(gone.tenant, gone.userId, false);
    } catch (err) {
      this.logger.warn({ component: 'hub', err: (err as Error).message }, 'presence heartbeat failed');
    }
  }
}
