import { CounterChild } from '../../observability/metrics.js';
import type { ActorMetrics } from './actor-metrics.js';
import { mintAskId } from './ask-ids.js';
import { askTraced, type AskPlan, type AskRoute, type FirstDelivery } from './ask-loop.js';
import { OwnerCache } from './owner-cache.js';
import { addressKey, checkedAddress, shardOfKey } from './placement.js';
import { servesNested, type ShardLeases } from './shard-leases.js';
import type { ActorAddress, AskOptions } from './types.js';

/** What routing an ask needs of its node's actor system (RedisActorSystem). */
export interface AskRouterHost {
  readonly nodeId: string;
  readonly leases: ShardLeases;
  readonly metrics: ActorMetrics;
  /** Whether the node's stop began (it then sends no vacant shard's message to itself). */
  isStopping(): boolean;
  /** The nodes hosting actors right now, read afresh. */
  refreshMembership(): Promise<readonly string[]>;
  /** Runs a message on this node (claiming its shard if vacant and this node is its rendezvous owner). */
  deliverLocal(plan: AskPlan, first?: FirstDelivery): Promise<unknown>;
  /** Sends a message to the node `node` and waits up to `timeoutMs` for its reply. */
  request: AskRoute['request'];
}

export interface AskRouterSettings {
  shards: number;
  /** Budget of one remote attempt. */
  attemptMs: number;
  /** An ask's budget when it names none. */
  askTimeoutMs: number;
  /** How long a lease holder read from Redis is remembered at most (a lease tick). */
  holdMs: number;
}

/**
 * Where an ask goes: this node while it serves the actor's shard, else the shard's lease holder
 * (remembered, see OwnerCache), else its rendezvous owner among the nodes live right now; an ask is
 * planned once (address checked, key and shard, de-duplication id, deadline) and sent with retries by
 * askWithRetry, in a span when tracing is on.
 */
export class AskRouter implements AskRoute {
  readonly nodeId: string;
  readonly attemptMs: number;
  private readonly owners = new OwnerCache();
  private readonly local: CounterChild;
  private readonly remote: CounterChild;

  constructor(
    private readonly host: AskRouterHost,
    private readonly settings: AskRouterSettings,
  ) {
    this.nodeId = host.nodeId;
    this.attemptMs = settings.attemptMs;
    this.local = new CounterChild(host.metrics.routed, { route: 'local' });
    this.remote = new CounterChild(host.metrics.routed, { route: 'remote' });
  }

  /** Sends `msg` to the actor `to`; throws at once on an invalid address (the caller makes it a rejection). */
  ask(to: ActorAddress, msg: unknown, opts: AskOptions): Promise<unknown> {
    const address = checkedAddress(to);
    const key = addressKey(address);
    return askTraced(this, {
      to: address,
      key,
      shard: shardOfKey(key, this.settings.shards),
      msg,
      dedupeId: opts.dedupeId ?? mintAskId(),
      minted: opts.dedupeId === undefined,
      deadline: opts.deadline ?? Date.now() + (opts.timeoutMs ?? this.settings.askTimeoutMs),
      nested: opts.nested,
      shareReply: opts.shareReply,
    });
  }

  /**
   * Where to send a message for `shard`: its lease holder (cached, see OwnerCache), else its rendezvous
   * owner among the nodes live right now: a vacant shard is read against fresh membership, so the first
   * message after a dead owner's lease expired goes to (and is claimed by) a live node at once.
   */
  resolveOwner(shard: number, nested?: boolean): string | Promise<string> {
    const { host } = this;
    if (host.leases.isServing(shard)) return this.nodeId;
    // An ask of a turn for a shard this node hands off is served here (see RedisActorSystem.askFromTurn).
    const held = nested ? host.leases.get(shard) : undefined;
    if (held && servesNested(held)) return this.nodeId;
    return (
      this.owners.get(shard) ??
      this.owners.lookUp(shard, host.leases, this.nodeId, this.settings.holdMs, async () => {
        const nodes = await host.refreshMembership();
        return host.isStopping() ? nodes.filter((n) => n !== this.nodeId) : nodes;
      })
    );
  }

  deliverLocal(plan: AskPlan, first?: FirstDelivery): Promise<unknown> {
    return this.host.deliverLocal(plan, first);
  }

  request(...args: Parameters<AskRoute['request']>): Promise<unknown> {
    return this.host.request(...args);
  }

  routed(route: 'local' | 'remote'): void {
    (route === 'local' ? this.local : this.remote).inc();
  }

  unroute(shard: number): void {
    this.owners.forget(shard);
  }

  /** Forgets every remembered holder among `nodes` (they left membership). */
  forgetNodes(nodes: ReadonlySet<string>): void {
    this.owners.forgetNodes(nodes);
  }
}
