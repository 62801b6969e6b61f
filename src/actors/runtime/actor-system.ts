import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisClient } from '../../data/redis.js';
import { AppError } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { activeContext, inSpan, SpanKind, startSpan, tracingOn } from '../../observability/tracing.js';
import { Activation, type ActivationHost, type Envelope } from './activation.js';
import { actorKeys, type ActorKeys } from './actor-keys.js';
import { actorMetrics, type ActorMetrics } from './actor-metrics.js';
import { askWithRetry, type AskRoute, type FirstDelivery } from './ask-loop.js';
import { Handoffs, type Buffered, type HandoffHost } from './handoff.js';
import { RedisPushPublisher } from '../../realtime/redis-publisher.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import { ConnectionWatch } from './connection-watch.js';
import { Membership } from './membership.js';
import { OwnerCache } from './owner-cache.js';
import { addressKey, checkedAddress, parseAddressKey, rendezvousOwner, shardOf } from './placement.js';
import { monotonicNow, ShardLeases, type ShardLease } from './shard-leases.js';
import { SnapshotStore, type WriterLease } from './snapshot-store.js';
import { RedisTransport, type RemoteRequest } from './transport.js';
import type { ActorAddress, ActorBehavior, ActorKind, ActorSystem, AskOptions } from './types.js';

export interface ActorSystemDeps {
  nodeId: string;
  /** Command connection (shared with the node); the system duplicates it for its blocking inbox reads. */
  redis: RedisClient;
  /** Base of the runtime's keys: `infra.keys.actors`. */
  keyPrefix: string;
  /**
   * `retiredRetentionMs`: how long a retired snapshot is kept (default 10 minutes). `connectionPollMs`:
   * how often a hosting node looks for crashed members' connections in Redis (default 250; 0: never,
   * a crashed node's shards then wait for its lease to expire). Decision 1116.
   */
  config: {
    shards: number;
    leaseMs: number;
    idleMs: number;
    retiredRetentionMs?: number;
    connectionPollMs?: number;
  };
  logger: Logger;
  metrics: Metrics;
  /**
   * Where turns push, fixed at construction: a node gives its publisher (the hub's once the hub role runs,
   * else the Redis push relay; src/composition/role-links.ts). Default: the Redis push channel.
   */
  publisher?: PushPublisher;
  /** Channel of the default Redis publisher (`infra.keys.hubPush`; defaults to `<keyPrefix>hub-push`). */
  hubPushChannel?: string;
  behaviors?: ActorBehavior<any, any, any>[];
  /** Default total budget of an ask, retries included (default max(10 s, 4 x lease)). */
  askTimeoutMs?: number;
  /** How long replies are remembered for de-duplication (default 2 minutes, at least 6 asks' budget). */
  dedupeTtlMs?: number;
}

/** How long a retired snapshot is kept unless configured (ACTOR_RETIRED_RETENTION_SECONDS). */
export const DEFAULT_RETIRED_RETENTION_MS = 600_000;

/** How often a hosting node polls Redis for crashed members' connections unless configured (decision 1116). */
export const DEFAULT_CONNECTION_POLL_MS = 250;

/** Hand-off rounds a stop runs at most (each waits for the claims in flight, then hands off what is held). */
const STOP_HANDOFF_ROUNDS = 5;

/**
 * Events for tests and operators: activated, passivated, shard-acquired, shard-lost, handoff, fenced,
 * membership, unseen (a member's connection missing from a poll), evicted (a crashed member evicted) and
 * inbox (this node's inbox connection closed or ready).
 */
export type ActorSystemEvents = EventEmitter;

/**
 * The actor runtime of one node: owns shards by fenced Redis leases, hosts their activations and
 * routes messages to whichever node owns an actor. See docs/actors.md.
 */
export class RedisActorSystem implements ActorSystem, ActivationHost, HandoffHost {
  readonly nodeId: string;
  readonly events: ActorSystemEvents = new EventEmitter();
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly idleMs: number;
  readonly retiredRetentionMs: number;
  readonly keys: ActorKeys;
  readonly metrics: ActorMetrics;
  readonly leases: ShardLeases;
  readonly membership: Membership;
  /** Finds crashed members by their Redis connections (decision 1116); `poll()` is public for tests. */
  readonly watch: ConnectionWatch;
  private readonly transport: RedisTransport;
  private readonly behaviors = new Map<ActorKind, ActorBehavior>();
  private readonly actors = new Map<string, Activation>();
  private readonly claims = new Map<number, Promise<ShardLease | undefined>>();
  private readonly owners = new OwnerCache();
  private refreshing?: Promise<readonly string[]>;
  readonly buffers = new Map<number, Buffered[]>();
  private readonly handoffs = new Handoffs(this);
  private readonly tickMs: number;
  private readonly askTimeoutMs: number;
  private readonly pushes: PushPublisher;
  private timer?: NodeJS.Timeout;
  private ticking = false;
  private stopping?: Promise<void>;
  private joined?: Promise<unknown>;
  private depth = 0;
  private closed = false;
  /** This node's inbox connection is closed: it claims and serves nothing until it is ready again. */
  private inboxDown = false;
  private readonly route: AskRoute;
  private readonly turnDurations = new Map<string, ReturnType<ActorMetrics['turnDuration']['labels']>>();

  constructor(private readonly deps: ActorSystemDeps) {
    const { nodeId, redis, config, logger } = deps;
    this.nodeId = nodeId;
    this.logger = logger.child({ component: 'actors' });
    this.idleMs = config.idleMs;
    this.retiredRetentionMs = config.retiredRetentionMs ?? DEFAULT_RETIRED_RETENTION_MS;
    this.keys = actorKeys(deps.keyPrefix);
    this.metrics = actorMetrics(deps.metrics, () => this.actors.size);
    this.tickMs = Math.max(20, Math.floor(config.leaseMs / 3));
    this.askTimeoutMs = deps.askTimeoutMs ?? Math.max(10_000, config.leaseMs * 4);
    this.store = new SnapshotStore({
      redis,
      keys: this.keys,
      dedupeTtlMs: deps.dedupeTtlMs ?? Math.max(120_000, 6 * this.askTimeoutMs),
    });
    this.leases = new ShardLeases({ redis, keys: this.keys, nodeId, leaseMs: config.leaseMs });
    this.membership = new Membership({ redis, keys: this.keys, nodeId, ttlMs: config.leaseMs });
    this.transport = new RedisTransport({
      redis,
      keys: this.keys,
      nodeId,
      logger: this.logger,
      onRequest: (r) => this.serveRemote(r),
      onInboxConnection: (state) => this.onInboxConnection(state),
    });
    this.watch = new ConnectionWatch({
      redis,
      nodeId,
      logger: this.logger,
      // Only a hosting node watches, and not while it stops.
      members: () => (this.membership.isJoined && !this.stopping ? this.membership.nodes() : []),
      evict: (node) => this.evictNode(node).then(() => undefined),
      missed: (node, misses) => this.events.emit('unseen', node, misses),
    });
    this.pushes =
      deps.publisher ?? new RedisPushPublisher(redis, deps.hubPushChannel ?? this.keys.hubPushChannel, this.logger);
    for (const b of deps.behaviors ?? []) this.behaviors.set(b.kind, b as ActorBehavior);
    const routed = {
      local: this.metrics.routed.labels({ route: 'local' }),
      remote: this.metrics.routed.labels({ route: 'remote' }),
    };
    this.route = {
      nodeId,
      attemptMs: Math.max(300, config.leaseMs),
      resolveOwner: (shard, nested) => this.resolveOwner(shard, nested),
      deliverLocal: (to, msg, dedupeId, first, nested) => this.deliver(to, msg, dedupeId, first, nested),
      request: (node, body, timeoutMs) => this.transport.request(node, body, timeoutMs),
      unroute: (shard) => this.owners.forget(shard),
      routed: (route) => routed[route].inc(),
    };
  }

  /** Starts reading the inbox and the lease/heartbeat timer; joins membership if behaviours are registered. */
  async start(): Promise<void> {
    this.transport.start();
    this.timer = setInterval(() => this.onTick(), this.tickMs);
    this.watch.start(this.deps.config.connectionPollMs ?? DEFAULT_CONNECTION_POLL_MS);
    await (this.behaviors.size ? this.join() : this.membership.refresh());
  }

  /** Resolves once this node hosts actors (is a placement target). */
  ready(): Promise<unknown> {
    return this.joined ?? Promise.resolve();
  }

  register<S, M, R>(behavior: ActorBehavior<S, M, R>): void {
    this.behaviors.set(behavior.kind, behavior as ActorBehavior);
    if (this.timer && !this.joined) void this.join();
  }

  publisher(): PushPublisher {
    return this.pushes;
  }

  async ask<R = unknown>(to: ActorAddress, msg: unknown, opts: AskOptions = {}): Promise<R> {
    if (this.closed) throw new AppError('service_unavailable', 'actor system stopped');
    const address = checkedAddress(to);
    const plan = {
      to: address,
      shard: shardOf(address, this.deps.config.shards),
      msg,
      dedupeId: opts.dedupeId ?? randomUUID(),
      minted: opts.dedupeId === undefined,
      deadline: Date.now() + (opts.timeoutMs ?? this.askTimeoutMs),
      nested: opts.nested,
    };
    // Tracing off: no span options or closure per ask.
    if (!tracingOn()) return (await askWithRetry(this.route, plan)) as R;
    return (await inSpan(
      `actor ask ${address.kind}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'actor.kind': address.kind, 'actor.shard': plan.shard, tenant: address.tenant },
      },
      () => askWithRetry(this.route, plan),
    )) as R;
  }

  /**
   * An ask of a turn (TurnServices). While the asking turn's shard is handed off, an actor of the same
   * shard is served here, under the lease this node still holds: the handoff waits for the asking turn,
   * and the next owner cannot claim the shard before it ends, so routed like any ask the message would
   * wait out its whole deadline and fail the turn with `timeout`. Asks of other shards go out marked
   * `nested`: a shard handed off meanwhile (here or on another node) serves them too, or two turns
   * asking each other's moving shards would each wait for a handoff waiting for the other.
   */
  async askFromTurn<R = unknown>(from: WriterLease, to: ActorAddress, msg: unknown): Promise<R> {
    const lease = this.leases.get(from.shard);
    const address = checkedAddress(to);
    const behavior = this.behaviors.get(address.kind);
    if (
      !lease ||
      lease !== from ||
      !this.servesNested(lease) ||
      !behavior ||
      shardOf(address, this.deps.config.shards) !== from.shard
    )
      return this.ask<R>(to, msg, { nested: true });
    return new Promise<R>((resolve, reject) =>
      this.activation(address, behavior, lease).enqueue({
        msg,
        nested: true,
        resolve: resolve as (v: unknown) => void,
        reject,
        trace: activeContext(),
      }),
    );
  }

  /** An ask another node sent here: its turn continues the asker's trace (the context in the envelope). */
  private serveRemote(r: RemoteRequest): Promise<unknown> {
    const span = startSpan(`actor serve ${r.to.kind}`, {
      kind: SpanKind.SERVER,
      parent: r.trace,
      onlyWithParent: true,
      attributes: { 'actor.kind': r.to.kind, 'actor.from': r.from, 'actor.attempt': r.attempt, tenant: r.to.tenant },
    });
    return span
      .run(() => this.deliver(r.to, r.msg, r.dedupeId, undefined, r.nested))
      .then(
        (v) => (span.end(), v),
        (e) => (span.end(e), Promise.reject(e)),
      );
  }

  /**
   * Where to send a message for `shard`: its lease holder (cached, see OwnerCache), else its rendezvous
   * owner among the nodes live right now: a vacant shard is read against fresh membership, so the first
   * message after a dead owner's lease expired goes to (and is claimed by) a live node at once.
   */
  private async resolveOwner(shard: number, nested?: boolean): Promise<string> {
    if (this.leases.isServing(shard)) return this.nodeId;
    // An ask of a turn for a shard this node hands off is served here (see askFromTurn).
    const held = nested ? this.leases.get(shard) : undefined;
    if (held && this.servesNested(held)) return this.nodeId;
    const cached = this.owners.get(shard);
    if (cached) return cached;
    const sentAt = monotonicNow();
    const holder = await this.leases.lookup(shard);
    if (holder && holder.node !== this.nodeId) {
      this.owners.set(shard, holder.node, sentAt + Math.min(holder.ttlMs, this.tickMs));
      return holder.node;
    }
    const nodes = await this.refreshMembership();
    const desired = rendezvousOwner(shard, this.stopping ? nodes.filter((n) => n !== this.nodeId) : nodes);
    if (!desired) throw new AppError('service_unavailable', 'no node hosts actors');
    return desired;
  }

  /** Runs a message on this node, claiming the shard if it is vacant and this node is its rendezvous owner. */
  private async deliver(
    to: ActorAddress,
    msg: unknown,
    dedupeId?: string,
    first?: FirstDelivery,
    nested?: boolean,
  ): Promise<unknown> {
    const behavior = this.behaviors.get(to.kind);
    // A stopping node still serves the asks of turns for the shards it hands off (servesNested below).
    if (!behavior || (this.stopping && !nested))
      throw new AppError('not_owner', `node ${this.nodeId} does not host this actor`);
    const shard = shardOf(to, this.deps.config.shards);
    let lease = this.leases.get(shard);
    if (lease && !lease.handingOff && !this.leases.isServing(shard)) this.dropShard(shard, 'self-fenced');
    lease = this.leases.get(shard) ?? (await this.claimIfDesired(shard));
    if (!lease) throw new AppError('not_owner', 'the shard is owned by another node');
    return new Promise((resolve, reject) => {
      const env: Envelope = { msg, dedupeId, first, resolve, reject, trace: activeContext() };
      if (lease.handingOff && nested && this.servesNested(lease))
        this.activation(to, behavior, lease).enqueue({ ...env, nested: true });
      else if (lease.handingOff)
        this.buffers.get(shard)?.push({ address: to, env }) ?? reject(new AppError('not_owner', 'shard moved'));
      else this.activation(to, behavior, lease).enqueue(env);
    });
  }

  private activation(to: ActorAddress, behavior: ActorBehavior, lease: ShardLease): Activation {
    const key = addressKey(to);
    const existing = this.actors.get(key);
    if (existing && !existing.closed && existing.lease === lease) return existing;
    const act = new Activation(this, behavior, to, lease);
    this.actors.set(key, act);
    return act;
  }

  /** Claims a vacant shard this node should own; a stopping node claims nothing. */
  private async claimIfDesired(shard: number): Promise<ShardLease | undefined> {
    if (this.stopping || this.inboxDown) return undefined;
    if (!this.isDesired(shard, this.membership.nodes()) && !this.isDesired(shard, await this.refreshMembership()))
      return undefined;
    if (this.stopping) return undefined;
    let claim = this.claims.get(shard);
    if (!claim) {
      claim = this.leases.acquire(shard).finally(() => this.claims.delete(shard));
      this.claims.set(shard, claim);
      void claim.then(
        (l) => l && this.acquired(l),
        () => undefined,
      );
    }
    return claim;
  }

  private isDesired(shard: number, nodes: readonly string[]): boolean {
    return rendezvousOwner(shard, nodes.includes(this.nodeId) ? nodes : [...nodes, this.nodeId]) === this.nodeId;
  }

  /**
   * Reads membership now (one refresh at a time). Nodes that dropped out stop being routed to, and asks
   * waiting on them re-route at once instead of at their attempt timeout.
   */
  private refreshMembership(): Promise<readonly string[]> {
    this.refreshing ??= (async () => {
      const before = this.membership.nodes();
      const nodes = await this.membership.refresh();
      if (nodes.join(',') === before.join(',')) return nodes;
      const gone = new Set(before.filter((n) => !nodes.includes(n)));
      if (gone.size) {
        this.owners.forgetNodes(gone);
        this.transport.abandon(gone);
      }
      this.events.emit('membership', nodes);
      return nodes;
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private acquired(lease: ShardLease): void {
    this.metrics.shardsOwned.set(this.leases.all().length);
    this.events.emit('shard-acquired', lease.shard, lease.epoch);
    // A claim sent before the inbox connection closed and won after it is not served either.
    if (this.inboxDown) return this.dropShard(lease.shard, 'disconnected');
    // A claim sent before the stop began and won after it is handed off at once (stop waits for it).
    if (this.stopping) void this.handoffs.start(lease, 'stop');
    else void this.wakeTimers(lease.shard, '+inf');
  }

  /**
   * Activates the shard's actors that have timers, so timers fire after failover, handoff or passivation.
   * Never once the node is stopping: an activation made then would arm timers nothing closes.
   */
  private async wakeTimers(shard: number, until: number | '+inf'): Promise<void> {
    if (this.stopping) return;
    const keys = await this.store
      .dueTimers(shard, until === '+inf' ? Number.MAX_SAFE_INTEGER : until)
      .catch(() => [] as string[]);
    if (!keys.length || this.stopping) return;
    const lease = this.leases.get(shard) ?? (await this.claimIfDesired(shard).catch(() => undefined));
    if (!lease || lease.handingOff || this.stopping) return;
    for (const key of keys) {
      const address = parseAddressKey(key);
      const behavior = address && this.behaviors.get(address.kind);
      if (address && behavior && !this.actors.has(key)) this.activation(address, behavior, lease);
    }
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
    if (node === this.nodeId || this.stopping) return [];
    await this.membership.evict(node);
    const freed = await this.leases.evictHolder(node, this.deps.config.shards);
    this.metrics.evictions.inc();
    this.logger.warn({ node, shards: freed.map((f) => f.shard) }, 'evicted a node whose Redis connection is gone');
    this.events.emit('evicted', node, freed);
    // A membership read already in flight may predate the eviction: read again after it.
    await this.refreshing?.catch(() => undefined);
    await this.refreshMembership().catch(() => undefined);
    const gone = new Set([node]);
    this.owners.forgetNodes(gone);
    this.transport.abandon(gone);
    const until = Date.now() + 2 * this.tickMs;
    for (const { shard } of freed)
      if (this.isDesired(shard, this.membership.nodes())) void this.wakeTimers(shard, until);
    return freed;
  }

  /**
   * This node's inbox connection is how other nodes tell it is alive: once it closes they may evict this
   * node and claim its shards before its leases run out, so it stops serving them at once (a read-only
   * turn could otherwise answer from memory) and claims nothing until the connection is ready again.
   * Its leases stay in Redis: the next message after that re-claims them.
   */
  private onInboxConnection(state: 'closed' | 'ready'): void {
    this.inboxDown = state === 'closed';
    this.events.emit('inbox', state);
    if (!this.inboxDown || this.stopping || this.closed) return;
    for (const lease of this.leases.all()) if (!lease.handingOff) this.dropShard(lease.shard, 'disconnected');
  }

  // ---- ActivationHost ----

  mayServe(act: Activation, env: Envelope): boolean {
    const lease = this.leases.get(act.lease.shard);
    if (lease !== act.lease) return false;
    // A nested ask during the shard's handoff (askFromTurn) is served while the lease is still valid.
    return this.leases.isServing(lease.shard) || (!!env.nested && this.servesNested(lease));
  }

  /** A shard handed off still serves asks of turns until its last turn ended, under a valid lease. */
  private servesNested(lease: ShardLease): boolean {
    return lease.handingOff && !lease.settled && monotonicNow() < lease.validUntil;
  }

  buffer(act: Activation, items: Envelope[]): void {
    const lease = act.lease as ShardLease;
    const buf = lease.handingOff ? this.buffers.get(lease.shard) : undefined;
    for (const env of items) {
      if (buf) buf.push({ address: act.address, env });
      else env.reject(new AppError('not_owner', 'shard lease lapsed'));
    }
  }

  rejected(act: Activation, counted = false): void {
    if (!counted) this.onFenced(act.address);
    if (this.leases.get(act.lease.shard) === act.lease) this.dropShard(act.lease.shard, 'fenced');
  }

  onFenced(address: ActorAddress): void {
    this.metrics.fencedWrites.inc({ kind: address.kind });
    this.events.emit('fenced', address);
  }

  isCurrent(lease: WriterLease): Promise<boolean> {
    return this.store.checkFence(lease);
  }

  deactivate(act: Activation, reason: 'idle' | 'requested' | 'error'): void {
    if (this.actors.get(act.key) === act) this.actors.delete(act.key);
    const left = act.close();
    this.metrics.passivations.inc({ kind: act.kind, reason });
    this.events.emit('passivated', act.address, reason);
    for (const env of left) this.deliver(act.address, env.msg, env.dedupeId).then(env.resolve, env.reject);
  }

  observe(event: 'activated' | 'dedupe' | 'depth' | 'turn', act: Activation, value = 0): void {
    if (event === 'activated') {
      this.metrics.activations.inc({ kind: act.kind });
      this.events.emit('activated', act.address, act.lease.epoch);
    } else if (event === 'dedupe') this.metrics.dedupeHits.inc({ kind: act.kind });
    else if (event === 'turn') this.turnDuration(act.kind).observe(value);
    else this.metrics.mailboxDepth.set((this.depth += value));
  }

  /** The turn histogram's child per actor kind, kept (label lookups showed in B1's profile). */
  private turnDuration(kind: string) {
    let child = this.turnDurations.get(kind);
    if (!child) this.turnDurations.set(kind, (child = this.metrics.turnDuration.labels({ kind })));
    return child;
  }

  // ---- leases, fencing, rebalance, handoff ----

  private join(): Promise<unknown> {
    this.joined ??= this.membership.join().then((nodes) => this.events.emit('membership', nodes));
    return this.joined;
  }

  private onTick(): void {
    for (const lease of this.leases.lapsed()) if (!lease.handingOff) this.dropShard(lease.shard, 'self-fenced');
    if (this.ticking || this.stopping) return;
    this.ticking = true;
    this.tick()
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'actor tick failed'))
      .finally(() => (this.ticking = false));
  }

  private async tick(): Promise<void> {
    const nodes = await this.refreshMembership();
    for (const shard of await this.leases.renewAll()) this.dropShard(shard, 'lost');
    if (!this.membership.isJoined || !nodes.includes(this.nodeId)) return;
    for (const lease of this.leases.all()) {
      const desired = rendezvousOwner(lease.shard, nodes);
      if (!lease.handingOff && desired && desired !== this.nodeId) void this.handoffs.start(lease, 'rebalance');
    }
    const until = Date.now() + 2 * this.tickMs;
    const mine = [...Array(this.deps.config.shards).keys()].filter((s) => rendezvousOwner(s, nodes) === this.nodeId);
    await Promise.all(mine.map((s) => this.wakeTimers(s, until)));
  }

  /** Stops serving a shard at once (self-fenced, lost or fenced): activations go, Redis keeps the lease until it expires. */
  private dropShard(shard: number, reason: 'self-fenced' | 'lost' | 'fenced' | 'disconnected'): void {
    const lease = this.leases.get(shard);
    if (!lease) return;
    this.leases.forget(lease);
    for (const act of this.activationsOf(shard)) {
      this.actors.delete(act.key);
      for (const env of act.close()) env.reject(new AppError('not_owner', `shard ${reason}`));
      this.metrics.passivations.inc({ kind: act.kind, reason: 'fenced' });
    }
    this.metrics.shardsOwned.set(this.leases.all().length);
    this.logger.warn({ shard, epoch: lease.epoch, reason }, 'stopped serving shard');
    this.events.emit('shard-lost', shard, reason);
  }

  activationsOf(shard: number): Activation[] {
    return [...this.actors.values()].filter((a) => a.lease.shard === shard);
  }

  evict(act: Activation): void {
    if (this.actors.get(act.key) === act) this.actors.delete(act.key);
  }

  async forward({ address, env }: Buffered): Promise<void> {
    await this.ask(address, env.msg, { dedupeId: env.dedupeId }).then(env.resolve, env.reject);
  }

  /**
   * Graceful stop: leave membership, hand every shard off, then stop reading the inbox. A claim sent
   * before the stop began (a tick waking a shard's timers, a delivery) can win its lease after the
   * leases were listed, so the hand-off repeats until no claim is in flight and no lease is held. Last,
   * every activation still here is closed: its timer handles are referenced, and nothing of a stopped
   * node may keep the process alive or fire later.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      this.watch.stop();
      await this.membership.leave().catch(() => undefined);
      for (let round = 0; round < STOP_HANDOFF_ROUNDS; round++) {
        await Promise.allSettled([...this.claims.values()]);
        const held = this.leases.all();
        const running = this.handoffs.inProgress();
        if (!held.length && !running.length && !this.claims.size) break;
        await Promise.all([...held.map((l) => this.handoffs.start(l, 'stop')), ...running]);
      }
      await this.transport.stop();
      this.closed = true;
      for (const act of [...this.actors.values()]) {
        this.evict(act);
        for (const env of act.close()) env.reject(new AppError('service_unavailable', 'actor system stopped'));
      }
      this.logger.info({ node: this.nodeId }, 'actor system stopped');
    })();
    return this.stopping;
  }
}
