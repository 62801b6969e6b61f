import { AppError } from '../../kernel/errors.js';
import { rendezvousOwner } from './placement.js';
import { monotonicNow, type ShardLeases } from './shard-leases.js';

/**
 * Where this node last found the lease holder of a shard it sends to, so a remote ask costs no lease
 * lookup in Redis. Only a routing hint: the owner checks its own lease before every turn and answers
 * `not_owner` otherwise, after which the sender forgets the entry and looks again. An entry never
 * outlives the lease it was read from (nor a lease tick), nor the holder's membership.
 */
export class OwnerCache {
  private readonly entries = new Map<number, { node: string; until: number }>();
  /** The lookup under way per shard: asks that need one meanwhile wait for it, in the order they came. */
  private readonly lookups = new Map<number, Promise<string>>();

  /** The remembered holder of `shard`, while still fresh. */
  get(shard: number): string | undefined {
    const e = this.entries.get(shard);
    if (!e) return undefined;
    if (monotonicNow() < e.until) return e.node;
    this.entries.delete(shard);
    return undefined;
  }

  /** Remembers `node` until the monotonic instant `until`. */
  set(shard: number, node: string, until: number): void {
    this.entries.set(shard, { node, until });
  }

  forget(shard: number): void {
    this.entries.delete(shard);
  }

  /** Drops every entry naming one of `nodes` (they left membership). */
  forgetNodes(nodes: ReadonlySet<string>): void {
    for (const [shard, e] of this.entries) if (nodes.has(e.node)) this.entries.delete(shard);
  }

  /**
   * The owner of a shard this node (`self`) neither holds nor has a fresh holder remembered for: the
   * lease holder in Redis (remembered while its lease runs, at most `holdMs`), else the shard's
   * rendezvous owner among `candidates()` (the nodes live right now): a vacant shard is read against
   * fresh membership, so the first message after a dead owner's lease expired goes to a live node at once.
   * One lookup per shard at a time, shared by every ask that needs it meanwhile: they go on in the order
   * they asked, before any ask made after the answer (which finds it remembered). Separate lookups would
   * each answer on their own, and an ask made after the first answer would overtake those still waiting.
   */
  lookUp(
    shard: number,
    leases: ShardLeases,
    self: string,
    holdMs: number,
    candidates: () => Promise<readonly string[]>,
  ): Promise<string> {
    const running = this.lookups.get(shard);
    if (running) return running;
    const lookup = this.read(shard, leases, self, holdMs, candidates);
    this.lookups.set(shard, lookup);
    const done = () => void (this.lookups.get(shard) === lookup && this.lookups.delete(shard));
    lookup.then(done, done);
    return lookup;
  }

  private async read(
    shard: number,
    leases: ShardLeases,
    self: string,
    holdMs: number,
    candidates: () => Promise<readonly string[]>,
  ): Promise<string> {
    const sentAt = monotonicNow();
    const holder = await leases.lookup(shard);
    if (holder && holder.node !== self) {
      this.set(shard, holder.node, sentAt + Math.min(holder.ttlMs, holdMs));
      return holder.node;
    }
    const desired = rendezvousOwner(shard, await candidates());
    if (!desired) throw new AppError('service_unavailable', 'no node hosts actors');
    return desired;
  }
}
