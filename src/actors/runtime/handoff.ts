import type { ActorSystemEvents, HandoffReason } from './actor-events.js';
import type { Logger } from '../../observability/logger.js';
import type { Activation } from './activation.js';
import type { Envelope } from './envelope.js';
import type { ActorMetrics } from './actor-metrics.js';
import type { ShardLease, ShardLeases } from './shard-leases.js';
import type { ActorAddress } from './types.js';

/** A message held for the next owner of a shard being handed off. */
export interface Buffered {
  address: ActorAddress;
  env: Envelope;
}

export interface HandoffHost {
  readonly leases: ShardLeases;
  readonly metrics: ActorMetrics;
  readonly events: ActorSystemEvents;
  readonly logger: Logger;
  /** Buffers of shards being handed off; deliveries for such a shard append here. */
  readonly buffers: Map<number, Buffered[]>;
  activationsOf(shard: number): Activation[];
  /** Removes a closed activation from the node's table. */
  evict(act: Activation): void;
  /** Sends a buffered message to the shard's next owner and settles its caller with the reply. */
  forward(item: Buffered): Promise<void>;
}

/**
 * Graceful handoff of shards, at most one per shard at a time:
 * buffer -> finish the running turns (already persisted; an actor of the shard they ask is served here) ->
 * release -> forward the buffer.
 */
export class Handoffs {
  private readonly running = new Map<number, Promise<void>>();

  constructor(private readonly host: HandoffHost) {}

  start(lease: ShardLease, reason: HandoffReason): Promise<void> {
    let p = this.running.get(lease.shard);
    if (!p) {
      p = this.run(lease, reason).finally(() => this.running.delete(lease.shard));
      this.running.set(lease.shard, p);
    }
    return p;
  }

  inProgress(): Promise<void>[] {
    return [...this.running.values()];
  }

  private async run(lease: ShardLease, reason: HandoffReason): Promise<void> {
    const { host } = this;
    lease.handingOff = true;
    const buffered: Buffered[] = [];
    host.buffers.set(lease.shard, buffered);
    host.events.emit('handoff-started', lease.shard, reason);
    // The running turns finish; what turns (of this shard or another, on this node or another) ask of
    // actors of this shard meanwhile is served here (nested asks, which may activate actors), so the
    // shard's activations are read again until none runs a turn.
    let acts = host.activationsOf(lease.shard);
    for (;;) {
      await Promise.all(acts.map((a) => a.whenIdle()));
      acts = host.activationsOf(lease.shard);
      if (!acts.some((a) => a.busy)) break;
    }
    // From here on an ask of a turn waits for the next owner like any message (no turn of this shard runs).
    lease.settled = true;
    for (const act of acts) {
      host.evict(act);
      for (const env of act.close()) buffered.push({ address: act.address, env });
      host.metrics.passivations.inc({ kind: act.kind, reason: 'handoff' });
    }
    if (host.leases.get(lease.shard) === lease) {
      await host.leases
        .release(lease)
        .catch((err) => host.logger.warn({ shard: lease.shard, err: (err as Error).message }, 'lease release failed'));
    }
    host.buffers.delete(lease.shard);
    host.metrics.handoffs.inc({ reason });
    host.metrics.shardsOwned.set(host.leases.all().length);
    host.events.emit('handoff', lease.shard, reason);
    if (buffered.length) host.metrics.forwarded.inc(buffered.length);
    await Promise.allSettled(buffered.map((item) => host.forward(item)));
  }
}
