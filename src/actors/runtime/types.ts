import type { PushName, PushPayload } from '../../contracts/pushes.js';
import type { RoomMove } from '../../realtime/push-delivery.js';

/**
 * The contract between the actor runtime (src/actors/runtime) and the actors built on it
 * (call, meeting, device). Behaviours are plain objects; the runtime owns placement, turns,
 * snapshots, fencing, routing and handoff.
 */
export type ActorKind = 'call' | 'meeting' | 'device';

/** An actor's identity. The runtime shards on `${tenant}/${kind}/${id}`. */
export interface ActorAddress {
  tenant: string;
  kind: ActorKind;
  id: string;
}

export interface ActorContext<S> {
  readonly address: ActorAddress;
  /**
   * The actor's state; mutate it in place or replace it. Snapshotted after every turn that changed it.
   * Between turns it is kept deep-frozen as persisted (plain JSON data): a turn of a message the behaviour
   * declares read-only sees it frozen; any other turn gets a private copy to change.
   */
  state: S;
  /** Fencing token of the shard at this turn; durable writes outside the runtime must carry it. */
  readonly epoch: number;
  /** Schedules `msg` to this actor after `delayMs`, delivered as an ordinary turn (persisted with the snapshot). */
  setTimer(name: string, delayMs: number, msg: unknown): void;
  clearTimer(name: string): void;
  /** Queues a push to rooms (src/realtime); sent only once the turn has been persisted (at-most-once). */
  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>): void;
  /** Queues a room move of the sockets in `rooms` (PushPublisher.move), flushed in order with the pushes. */
  moveSockets(rooms: string | string[], change: RoomMove): void;
  /** Asks another actor (never itself) and awaits the reply. */
  ask<R = unknown>(to: ActorAddress, msg: unknown): Promise<R>;
  /** Lets the runtime deactivate the actor after this turn (its snapshot is kept or deleted per `forget`). */
  passivate(opts?: { forget?: boolean }): void;
  /**
   * The actor's state is finished: this turn writes the snapshot (changed or not) with an expiry, the
   * node's retention (ACTOR_RETIRED_RETENTION_SECONDS) or `retainMs`, counted from the last pending timer
   * if any. A later turn that changes the state writes it without expiry again, unless it retires too.
   * Past the expiry the actor starts from its initial state: keep elsewhere what must outlive it.
   */
  retire(retainMs?: number): void;
  /**
   * Runs a durable write outside the runtime (e.g. a MongoDB update) under this turn's epoch: `write`
   * must apply only when the stored epoch is not newer (src/actors/runtime/fenced-write.ts epochFilter)
   * and return `false` when nothing matched. A stale epoch is counted and throws `not_owner`.
   */
  fencedWrite<T>(write: (epoch: number) => Promise<T | false>): Promise<T>;
}

export interface ActorBehavior<S = unknown, M = unknown, R = unknown> {
  kind: ActorKind;
  initialState(address: ActorAddress): S;
  /**
   * The state of an actor that has no snapshot (never written, expired after `retire`, or lost), rebuilt
   * from what outlives snapshots (decision 1104): called with the initial state once per such activation,
   * before its first turn. What it returns is the state the turns see, written only by a turn that changes
   * it (or retires). A failure fails the activation: its messages answer `service_unavailable` and the next
   * message tries again.
   */
  recover?(address: ActorAddress, initial: S): Promise<S>;
  /** One turn: messages to one actor are processed one at a time, in arrival order. */
  receive(ctx: ActorContext<S>, msg: M): Promise<R> | R;
  /**
   * Messages that only read (decision 1120). Their turns run against the actor's state as last persisted,
   * deep-frozen, and skip its serialisation and write-through: an in-place change there throws (the turn
   * fails as `internal`, nothing changed); replacing `ctx.state` or setting a timer still persists.
   */
  readOnly?(msg: M): boolean;
}

export interface AskOptions {
  timeoutMs?: number;
  /** Same id => the message is applied at most once even when the sender retries. */
  dedupeId?: string;
  /**
   * Date.now() at which the ask fails (default: now + timeoutMs). No turn of it begins later, on any node
   * (decision 1140): a caller told `timeout` was not served afterwards. A forwarded delivery keeps its
   * asker's deadline.
   */
  deadline?: number;
  /**
   * Asked by a running turn (the runtime sets it for `ctx.ask`): a shard being handed off still serves it
   * under the lease its holder keeps until its last turn ended, so turns asking each other's shards
   * during a rebalance do not wait for handoffs that wait for them.
   */
  nested?: boolean;
  /**
   * The asker only reads or serialises the reply and keeps none of it past that (a hub method's
   * acknowledgement, the transport's reply envelope): the turn's reply is handed over as the behaviour
   * returned it, without the copy that otherwise keeps the asker off the actor's state.
   */
  shareReply?: boolean;
}

export interface ActorSystem {
  readonly nodeId: string;
  register<S, M, R>(behavior: ActorBehavior<S, M, R>): void;
  /** Delivers `msg` to the actor wherever it lives (activating it on its owner) and returns the reply. */
  ask<R = unknown>(to: ActorAddress, msg: unknown, opts?: AskOptions): Promise<R>;
  /** Graceful shutdown: stop taking turns, persist, release leases so other nodes take over. */
  stop(): Promise<void>;
}
