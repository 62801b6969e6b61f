import type { ActorSystemEvents, DropReason, HandoffReason } from './actor-events.js';
import type { Logger } from '../../observability/logger.js';
import type { Activation } from './activation.js';
import type { ActorMetrics } from './actor-metrics.js';
import type { Membership } from './membership.js';
import { rendezvousOwner } from './placement.js';
import type { ShardLease, ShardLeases } from './shard-leases.js';
import type { SnapshotStore } from './snapshot-store.js';
import { AppError } from '../../kernel/errors.js';

/** What the shard placement needs of its node's actor system (RedisActorSystem). */
export interface PlacementHost {
  readonly nodeId: string;
  readonly leases: ShardLeases;
  readonly membership: Membership;
  readonly store: SnapshotStore;
  readonly metrics: ActorMetrics;
  readonly events: ActorSystemEvents;
  readonly logger: Logger;
  /** Whether the node's stop began (it then claims nothing and wakes nothing). */
  isStopping(): boolean;
  /** Routes to `gone` are forgotten and asks waiting on them re-route at once. */
  forgetNodes(gone: ReadonlySet<string>): void;
  handOff(lease: ShardLease, reason: HandoffReason): Promise<void>;
  activationsOf(shard: number): Activation[];
  /** Removes an activation from the node's table. */
  evict(act: Activation): void;
  /** Activates the actor stored under `key` on `lease` when it is not active here (its timers then run). */
  wake(key: string, lease: ShardLease): void;
}

/**
 * Which shards this node holds: claims of vacant shards it is the rendezvous owner of, the periodic
 * renewal and rebalance, the waking of shards' durable timers, and the shards it stops serving at once
 * (a lapsed or lost lease, a fenced write, its inbox connection closed, a crashed member evicted).
 * Routing and turns are the actor system's (actor-system.ts).
 */
export class ShardPlacement {
  private readonly claims = new Map<number, Promise<ShardLease | undefined>>();
  private refreshing?: Promise<readonly string[]>;
  private ticking = false;
  private keepingAlive = false;
  /** This node's inbox connection is closed: it claims and serves nothing until it is ready again. */
  private inboxDown = false;

  constructor(
    private readonly host: PlacementHost,
    private readonly shards: number,
    private readonly tickMs: number,
  ) {}

  /**
   * Hands every shard off for a stop. A claim sent before the stop began (a tick waking a shard's timers,
   * a delivery) can win its lease after the leases were listed, so the hand-off repeats (at most `rounds`
   * times) until no claim is in flight, no lease is held and no hand-off (`running()`) is in progress.
   */
  async handOffAll(rounds: number, running: () => Promise<void>[]): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      await Promise.allSettled(this.inFlight());
      const held = this.host.leases.all();
      const inProgress = running();
      if (!held.length && !inProgress.length && !this.inFlight().length) return;
      await Promise.all([...held.map((l) => this.host.handOff(l, 'stop')), ...inProgress]);
    }
  }

  /** Claims a vacant shard this node should own; a stopping node claims nothing. */
  async claimIfDesired(shard: number): Promise<ShardLease | undefined> {
    const { host } = this;
    if (host.isStopping() || this.inboxDown) return undefined;
    if (!this.isDesired(shard, host.membership.nodes()) && !this.isDesired(shard, await this.refreshMembership()))
      return undefined;
    if (host.isStopping()) return undefined;
    let claim = this.claims.get(shard);
    if (!claim) {
      claim = host.leases.acquire(shard).finally(() => this.claims.delete(shard));
      this.claims.set(shard, claim);
      void claim.then(
        (l) => l && this.acquired(l),
        () => undefined,
      );
    }
    return claim;
  }

  /** The claims in flight (a stop waits for them: one won after the leases were listed is handed off too). */
  inFlight(): Promise<ShardLease | undefined>[] {
    return [...this.claims.values()];
  }

  isDesired(shard: number, nodes: readonly string[]): boolean {
    const me = this.host.nodeId;
    return rendezvousOwner(shard, nodes.includes(me) ? nodes : [...nodes, me]) === me;
  }

  /**
   * Reads membership now (one refresh at a time). Nodes that dropped out stop being routed to, and asks
   * waiting on them re-route at once instead of at their attempt timeout.
   */
  refreshMembership(): Promise<readonly string[]> {
    const { host } = this;
    this.refreshing ??= (async () => {
      const before = host.membership.nodes();
      const nodes = await host.membership.refresh();
      if (nodes.join(',') === before.join(',')) return nodes;
      const gone = new Set(before.filter((n) => !nodes.includes(n)));
      if (gone.size) host.forgetNodes(gone);
      host.events.emit('membership', nodes);
      return nodes;
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private acquired(lease: ShardLease): void {
    const { host } = this;
    host.metrics.shardsOwned.set(host.leases.all().length);
    host.events.emit('shard-acquired', lease.shard, lease.epoch);
    // A claim sent before the inbox connection closed and won after it is not served either.
    if (this.inboxDown) return this.dropShard(lease.shard, 'disconnected');
    // A claim sent before the stop began and won after it is handed off at once (stop waits for it).
    if (host.isStopping()) void host.handOff(lease, 'stop');
    else void this.wakeTimers(lease.shard, '+inf');
  }

  /**
   * Activates the shard's actors that have timers, so timers fire after failover, handoff or passivation.
   * Never once the node is stopping: an activation made then would arm timers nothing closes.
   */
  async wakeTimers(shard: number, until: number | '+inf'): Promise<void> {
    const { host } = this;
    if (host.isStopping()) return;
    const keys = await host.store
      .dueTimers(shard, until === '+inf' ? Number.MAX_SAFE_INTEGER : until)
      .catch(() => [] as string[]);
    if (!keys.length || host.isStopping()) return;
    const lease = host.leases.get(shard) ?? (await this.claimIfDesired(shard).catch(() => undefined));
    if (!lease || lease.handingOff || host.isStopping()) return;
    for (const key of keys) host.wake(key, lease);
  }

  /**
   * Evicts a node found crashed (its Redis connections are gone, see ConnectionWatch), without waiting
   * for its lease: it leaves membership, each shard lease still naming it is deleted (compare and
   * delete, so a lease another node took since stays), this node's view and routes drop it, and asks
   * waiting on it are retried at once. Nothing it could still write is accepted: a claim raises the
   * shard's epoch and every write-through is fenced on epoch and lease. Resolves with the shards freed
   * and the time their leases still had to run.
   */
  async evictNode(node: string): Promise<{ shard: number; ttlMs: number }[]> {
    const { host } = this;
    if (node === host.nodeId || host.isStopping()) return [];
    await host.membership.evict(node);
    const freed = await host.leases.evictHolder(node, this.shards);
    host.metrics.evictions.inc();
    host.logger.warn({ node, shards: freed.map((f) => f.shard) }, 'evicted a node whose Redis connection is gone');
    host.events.emit('evicted', node, freed);
    // A membership read already in flight may predate the eviction: read again after it.
    await this.refreshing?.catch(() => undefined);
    await this.refreshMembership().catch(() => undefined);
    host.forgetNodes(new Set([node]));
    const until = Date.now() + 2 * this.tickMs;
    for (const { shard } of freed)
      if (this.isDesired(shard, host.membership.nodes())) void this.wakeTimers(shard, until);
    return freed;
  }

  /**
   * This node's inbox connection is how other nodes tell it is alive: once it closes they may evict this
   * node and claim its shards before its leases run out, so it stops serving them at once (a read-only
   * turn could otherwise answer from memory) and claims nothing until the connection is ready again.
   * Its leases stay in Redis: the next message after that re-claims them.
   */
  onInboxConnection(state: 'closed' | 'ready'): void {
    const { host } = this;
    this.inboxDown = state === 'closed';
    host.events.emit('inbox', state);
    // A stopped node is stopping too: it no longer serves anything to drop.
    if (!this.inboxDown || host.isStopping()) return;
    for (const lease of host.leases.all()) if (!lease.handingOff) this.dropShard(lease.shard, 'disconnected');
  }

  /**
   * The lease timer: lapsed leases stop serving at once; then one keep-alive (membership heartbeat and
   * lease renewals, together) and one rebalance at a time, each on its own. The rebalance wakes every
   * owned shard's timers, which waits for Redis shard by shard: under load (a reconnect storm) that took
   * longer than a lease, and a renewal queued behind it came too late, so the node gave up shards it was
   * serving and their actors failed over once more (decision 1146).
   */
  onTick(): void {
    const { host } = this;
    for (const lease of host.leases.lapsed()) if (!lease.handingOff) this.dropShard(lease.shard, 'self-fenced');
    if (host.isStopping()) return;
    if (!this.keepingAlive) {
      this.keepingAlive = true;
      this.keepAlive()
        .catch((err) => host.logger.warn({ err: (err as Error).message }, 'actor lease renewal failed'))
        .finally(() => (this.keepingAlive = false));
    }
    if (this.ticking) return;
    this.ticking = true;
    this.tick()
      .catch((err) => host.logger.warn({ err: (err as Error).message }, 'actor tick failed'))
      .finally(() => (this.ticking = false));
  }

  /** The membership heartbeat and every lease's renewal, in one wait. */
  private async keepAlive(): Promise<void> {
    const { host } = this;
    const [, lost] = await Promise.all([this.refreshMembership(), host.leases.renewAll()]);
    for (const shard of lost) this.dropShard(shard, 'lost');
  }

  private async tick(): Promise<void> {
    const { host } = this;
    // The keep-alive's read when one is in flight (refreshMembership shares it).
    const nodes = await this.refreshMembership();
    if (!host.membership.isJoined || !nodes.includes(host.nodeId)) return;
    for (const lease of host.leases.all()) {
      const desired = rendezvousOwner(lease.shard, nodes);
      if (!lease.handingOff && desired && desired !== host.nodeId) void host.handOff(lease, 'rebalance');
    }
    const until = Date.now() + 2 * this.tickMs;
    const mine = [...Array(this.shards).keys()].filter((s) => rendezvousOwner(s, nodes) === host.nodeId);
    await Promise.all(mine.map((s) => this.wakeTimers(s, until)));
  }

  /** Stops serving a shard at once (self-fenced, lost or fenced): activations go, Redis keeps the lease until it expires. */
  dropShard(shard: number, reason: DropReason): void {
    const { host } = this;
    const lease = host.leases.get(shard);
    if (!lease) return;
    host.leases.forget(lease);
    for (const act of host.activationsOf(shard)) {
      host.evict(act);
      for (const env of act.close()) env.reject(new AppError('not_owner', `shard ${reason}`));
      host.metrics.passivations.inc({ kind: act.kind, reason: 'fenced' });
    }
    host.metrics.shardsOwned.set(host.leases.all().length);
    host.logger.warn({ shard, epoch: lease.epoch, reason }, 'stopped serving shard');
    host.events.emit('shard-lost', shard, reason);
  }
}
