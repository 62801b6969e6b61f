import { EventEmitter } from 'node:events';
import { AppError } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import { activeContext } from '../../observability/tracing.js';
import { Activation, type ActivationHost } from './activation.js';
import type { Delivery, Envelope } from './envelope.js';
import { actorKeys, type ActorKeys } from './actor-keys.js';
import { actorMetrics, type ActorMetrics } from './actor-metrics.js';
import type { FirstDelivery } from './ask-loop.js';
import { AskRouter } from './ask-router.js';
import { Handoffs, type Buffered, type HandoffHost } from './handoff.js';
import type { ActorEventMap, ActorSystemEvents, HandoffReason } from './actor-events.js';
import { ShardPlacement, type PlacementHost } from './shard-placement.js';
import {
  DEFAULT_CONNECTION_POLL_MS,
  DEFAULT_RETIRED_RETENTION_MS,
  DEFAULT_SLOW_TURN_MS,
  DEFAULT_DEADLINE_SKEW_MS,
  DEFAULT_LINK,
  type ActorSystemDeps,
} from './system-settings.js';
import { RedisPushPublisher } from '../../realtime/redis-publisher.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import { ConnectionWatch } from './connection-watch.js';
import { Membership } from './membership.js';
import { addressKey, checkedAddress, parseAddressKey, shardOf, shardOfKey } from './placement.js';
import { servesNested, ShardLeases, type ShardLease } from './shard-leases.js';
import { SnapshotStore, type WriterLease } from './snapshot-store.js';
import { RedisTransport, servedInSpan, type RemoteRequest } from './transport.js';
import type { ActorAddress, ActorBehavior, ActorKind, ActorSystem, AskOptions } from './types.js';

/** Hand-off rounds a stop runs at most (each waits for the claims in flight, then hands off what is held). */
const STOP_HANDOFF_ROUNDS = 5;

/**
 * The actor runtime of one node: owns shards by fenced Redis leases, hosts their activations and
 * routes messages to whichever node owns an actor. See docs/actors.md.
 */
export class RedisActorSystem implements ActorSystem, ActivationHost, HandoffHost, PlacementHost {
  readonly nodeId: string;
  readonly events: ActorSystemEvents = new EventEmitter<ActorEventMap>();
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly idleMs: number;
  readonly retiredRetentionMs: number;
  readonly slowTurnMs: number;
  /** Allowance for clocks apart on a deadline another node set (ACTOR_DEADLINE_SKEW_MS). */
  private readonly deadlineSkewMs: number;
  readonly keys: ActorKeys;
  readonly metrics: ActorMetrics;
  readonly leases: ShardLeases;
  readonly membership: Membership;
  /** Finds crashed members by their Redis connections (decision 1116); `poll()` is public for tests. */
  readonly watch: ConnectionWatch;
  private readonly transport: RedisTransport;
  private readonly behaviors = new Map<ActorKind, ActorBehavior>();
  private readonly actors = new Map<string, Activation>();
  readonly buffers = new Map<number, Buffered[]>();
  private readonly handoffs = new Handoffs(this);
  private readonly placement: ShardPlacement;
  private readonly tickMs: number;
  private readonly pushes: PushPublisher;
  private timer?: NodeJS.Timeout;
  private stopping?: Promise<void>;
  private joined?: Promise<unknown>;
  private depth = 0;
  private closed = false;
  private readonly router: AskRouter;

  constructor(private readonly deps: ActorSystemDeps) {
    const { nodeId, redis, config, logger } = deps;
    this.nodeId = nodeId;
    this.logger = logger.child({ component: 'actors' });
    this.idleMs = config.idleMs;
    this.retiredRetentionMs = config.retiredRetentionMs ?? DEFAULT_RETIRED_RETENTION_MS;
    this.slowTurnMs = config.slowTurnMs ?? DEFAULT_SLOW_TURN_MS;
    this.deadlineSkewMs = config.deadlineSkewMs ?? DEFAULT_DEADLINE_SKEW_MS;
    this.keys = actorKeys(deps.keyPrefix);
    this.metrics = actorMetrics(
      deps.metrics,
      () => this.actors.size,
      () => this.depth,
    );
    this.tickMs = Math.max(20, Math.floor(config.leaseMs / 3));
    this.placement = new ShardPlacement(this, config.shards, this.tickMs);
    const askTimeoutMs = deps.askTimeoutMs ?? Math.max(10_000, config.leaseMs * 4);
    this.store = new SnapshotStore({
      redis,
      keys: this.keys,
      dedupeTtlMs:
        deps.dedupeTtlMs ?? Math.max(120_000, 6 * (deps.askTimeoutMs ?? Math.max(10_000, config.leaseMs * 4))),
    });
    this.leases = new ShardLeases({ redis, keys: this.keys, nodeId, leaseMs: config.leaseMs });
    this.membership = new Membership({ redis, keys: this.keys, nodeId, ttlMs: config.leaseMs });
    this.transport = new RedisTransport({
      redis,
      keys: this.keys,
      nodeId,
      logger: this.logger,
      onRequest: (r) => this.serveRemote(r),
      onNamesResent: () => this.metrics.namesResent.inc(),
      onInboxConnection: (state) => this.placement.onInboxConnection(state),
      ...(config.link === false ? {} : { link: config.link ?? DEFAULT_LINK }),
      onSent: (path) => this.metrics.remoteRequests.inc({ path }),
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
    this.router = new AskRouter(
      {
        nodeId,
        leases: this.leases,
        metrics: this.metrics,
        isStopping: () => this.stopping !== undefined,
        refreshMembership: () => this.placement.refreshMembership(),
        deliverLocal: (plan, first) => this.deliver(plan.to, plan.msg, plan, first),
        request: (node, body, timeoutMs) => this.transport.request(node, body, timeoutMs),
      },
      {
        shards: config.shards,
        attemptMs: Math.max(300, config.leaseMs),
        askTimeoutMs,
        holdMs: this.tickMs,
      },
    );
  }

  /** Starts reading the inbox and the lease/heartbeat timer; joins membership if behaviours are registered. */
  async start(): Promise<void> {
    this.transport.start();
    this.timer = setInterval(() => this.placement.onTick(), this.tickMs);
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

  ask<R = unknown>(to: ActorAddress, msg: unknown, opts: AskOptions = {}): Promise<R> {
    // Not an async function: a local ask is one promise chain from the asker to the turn (decision 1165).
    try {
      if (this.closed) throw new AppError('service_unavailable', 'actor system stopped');
      return this.router.ask(to, msg, opts) as Promise<R>;
    } catch (e) {
      return Promise.reject(e);
    }
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
      !servesNested(lease) ||
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
    return servedInSpan(r, () =>
      this.deliver(r.to, r.msg, {
        dedupeId: r.dedupeId,
        nested: r.nested,
        // The reply leaves in a JSON envelope: a copy of it first would be made for nothing.
        shareReply: true,
        deadline: r.deadline === undefined ? undefined : r.deadline + this.deadlineSkewMs,
      }),
    );
  }

  /**
   * Runs a message on this node, claiming the shard if it is vacant and this node is its rendezvous owner.
   * Not an async function: with the shard's lease held, the reply's promise is the turn's own (decision 1165).
   */
  private deliver(to: ActorAddress, msg: unknown, d: Delivery, first?: FirstDelivery): Promise<unknown> {
    try {
      const { nested } = d;
      const behavior = this.behaviors.get(to.kind);
      // A stopping node still serves the asks of turns for the shards it hands off (servesNested below).
      if (!behavior || (this.stopping && !nested))
        throw new AppError('not_owner', `node ${this.nodeId} does not host this actor`);
      const key = d.key ?? addressKey(to);
      const shard = d.shard ?? shardOfKey(key, this.deps.config.shards);
      const lease = this.leases.get(shard);
      if (lease && !lease.handingOff && !this.leases.isServing(shard)) this.placement.dropShard(shard, 'self-fenced');
      const held = this.leases.get(shard);
      if (held) return this.enqueue(to, msg, d, behavior, held, key, first);
      return this.placement.claimIfDesired(shard).then((claimed) => {
        if (!claimed) throw new AppError('not_owner', 'the shard is owned by another node');
        return this.enqueue(to, msg, d, behavior, claimed, key, first);
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Puts a message in its actor's mailbox under this lease (or the shard's handoff buffer). */
  private enqueue(
    to: ActorAddress,
    msg: unknown,
    d: Delivery,
    behavior: ActorBehavior,
    lease: ShardLease,
    key: string,
    first: FirstDelivery | undefined,
  ): Promise<unknown> {
    const { nested } = d;
    const shard = lease.shard;
    return new Promise((resolve, reject) => {
      const env: Envelope = {
        msg,
        dedupeId: d.dedupeId,
        first,
        resolve,
        reject,
        trace: activeContext(),
        deadline: d.deadline,
        shareReply: d.shareReply,
      };
      if (lease.handingOff && nested && servesNested(lease))
        this.activation(to, behavior, lease, key).enqueue({ ...env, nested: true });
      else if (lease.handingOff)
        this.buffers.get(shard)?.push({ address: to, env }) ?? reject(new AppError('not_owner', 'shard moved'));
      else this.activation(to, behavior, lease, key).enqueue(env);
    });
  }

  private activation(to: ActorAddress, behavior: ActorBehavior, lease: ShardLease, key = addressKey(to)): Activation {
    const existing = this.actors.get(key);
    if (existing && !existing.closed && existing.lease === lease) return existing;
    const act = new Activation(this, behavior, to, lease);
    this.actors.set(key, act);
    return act;
  }

  /** Evicts a node found crashed (ShardPlacement.evictNode; public for the connection watch and tests). */
  evictNode(node: string): Promise<{ shard: number; ttlMs: number }[]> {
    return this.placement.evictNode(node);
  }

  // ---- PlacementHost ----

  isStopping(): boolean {
    return this.stopping !== undefined;
  }

  forgetNodes(gone: ReadonlySet<string>): void {
    this.router.forgetNodes(gone);
    this.transport.abandon(gone);
  }

  handOff(lease: ShardLease, reason: HandoffReason): Promise<void> {
    return this.handoffs.start(lease, reason);
  }

  wake(key: string, lease: ShardLease): void {
    const address = parseAddressKey(key);
    const behavior = address && this.behaviors.get(address.kind);
    if (address && behavior && !this.actors.has(key)) this.activation(address, behavior, lease);
  }

  // ---- ActivationHost ----

  mayServe(act: Activation, env: Envelope): boolean {
    const lease = this.leases.get(act.lease.shard);
    if (lease !== act.lease) return false;
    // A nested ask during the shard's handoff (askFromTurn) is served while the lease is still valid.
    return this.leases.isServing(lease.shard) || (!!env.nested && servesNested(lease));
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
    if (this.leases.get(act.lease.shard) === act.lease) this.placement.dropShard(act.lease.shard, 'fenced');
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
    for (const env of left)
      this.deliver(act.address, env.msg, { dedupeId: env.dedupeId, deadline: env.deadline }).then(
        env.resolve,
        env.reject,
      );
  }

  observe(event: 'activated' | 'dedupe' | 'depth' | 'expired' | 'turn', act: Activation, value = 0): void {
    if (event === 'activated') {
      this.metrics.activations.inc({ kind: act.kind });
      this.events.emit('activated', act.address, act.lease.epoch);
    } else if (event === 'dedupe') this.metrics.dedupeHits.inc({ kind: act.kind });
    else if (event === 'turn') this.metrics.turnDurationOf(act.kind).observe(value);
    else if (event === 'expired') this.metrics.expired.inc({ kind: act.kind });
    else this.depth += value;
  }

  private join(): Promise<unknown> {
    // A hosting node listens for its peers' links; until it does (or if it cannot) they ask it by the lists.
    this.joined ??= Promise.all([this.membership.join(), this.transport.listen()]).then(([nodes]) =>
      this.events.emit('membership', nodes),
    );
    return this.joined;
  }

  activationsOf(shard: number): Activation[] {
    return [...this.actors.values()].filter((a) => a.lease.shard === shard);
  }

  evict(act: Activation): void {
    if (this.actors.get(act.key) === act) this.actors.delete(act.key);
  }

  async forward({ address, env }: Buffered): Promise<void> {
    await this.ask(address, env.msg, { dedupeId: env.dedupeId, deadline: env.deadline }).then(env.resolve, env.reject);
  }

  /**
   * Graceful stop: leave membership, hand every shard off (ShardPlacement.handOffAll), then stop reading
   * the inbox. Last, every activation still here is closed: its timer handles are referenced, and nothing
   * of a stopped node may keep the process alive or fire later.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      this.watch.stop();
      await this.membership.leave().catch(() => undefined);
      await this.placement.handOffAll(STOP_HANDOFF_ROUNDS, () => this.handoffs.inProgress());
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
