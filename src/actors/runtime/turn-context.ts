import { AppError } from '../../kernel/errors.js';
import { fencedWrite } from './fenced-write.js';
import { addressKey } from './placement.js';
import type { ActorAddress, ActorContext } from './types.js';
import type { PushName, PushPayload } from '../../contracts/pushes.js';
import type { PushPublisher, RoomMove } from '../../realtime/push-delivery.js';
import type { TimerEntry, WriterLease } from './snapshot-store.js';
import { tracedWrite, type TracedTurn } from './turn-probe.js';

/** The slice of an activation a turn may touch. */
export interface TurnTarget {
  readonly address: ActorAddress;
  readonly lease: WriterLease;
  state: unknown;
  readonly timers: Map<string, TimerEntry>;
}

/** What the runtime lends a turn: asking other actors and checking/counting the fence. */
export interface TurnServices {
  /** An ask of a turn of an activation under `from` (an actor of the same shard may be served under it). */
  askFromTurn<R>(from: WriterLease, to: ActorAddress, msg: unknown): Promise<R>;
  isCurrent(lease: WriterLease): Promise<boolean>;
  onFenced(address: ActorAddress): void;
}

export type Push =
  { rooms: string | string[]; event: PushName; payload: unknown } | { rooms: string | string[]; move: RoomMove };

/** The turn a set of pushes came from (its outbox entry's mark): each push's origin is it and its index. */
export interface TurnMark {
  source: string;
  epoch: number;
  turn: number;
}

/**
 * Sends pushes in order: a turn's after its save, or an outbox a dead node left (decision 1129). With the
 * turn's mark each push carries its origin, so one sent again is recorded once (decision 1133).
 */
export function sendPushes(publisher: PushPublisher, pushes: readonly Push[], mark?: TurnMark): void {
  pushes.forEach((p, index) => {
    if ('move' in p) publisher.move?.(p.rooms, p.move);
    else publisher.emit(p.rooms, p.event, p.payload as never, mark && { ...mark, index });
  });
}

/** One turn's view of its actor; pushes and passivation take effect only after the turn persisted. */
export class TurnContext<S> implements ActorContext<S> {
  private readonly pushes: Push[] = [];
  passivateRequested = false;
  forget = false;
  /** Set by retire(): the snapshot's retention asked for this turn (`null`: the node's default). */
  retired?: { retainMs: number | null };
  /** Set when a fencedWrite found a newer epoch: this node no longer owns the shard. */
  fenced = false;
  /** The turn replaced the state or changed a timer (what a read-only turn may still persist, decision 1120). */
  touched = false;

  constructor(
    private readonly target: TurnTarget,
    private readonly services: TurnServices,
    private readonly traced?: TracedTurn,
  ) {}

  get address(): ActorAddress {
    return this.target.address;
  }

  get state(): S {
    return this.target.state as S;
  }

  set state(next: S) {
    this.touched = true;
    this.target.state = next;
  }

  get epoch(): number {
    return this.target.lease.epoch;
  }

  setTimer(name: string, delayMs: number, msg: unknown): void {
    this.touched = true;
    this.target.timers.set(name, { name, due: Date.now() + Math.max(0, delayMs), msg });
  }

  clearTimer(name: string): void {
    this.touched = true;
    this.target.timers.delete(name);
  }

  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>): void {
    this.pushes.push({ rooms, event, payload });
  }

  moveSockets(rooms: string | string[], change: RoomMove): void {
    this.pushes.push({ rooms, move: change });
  }

  ask<R = unknown>(to: ActorAddress, msg: unknown): Promise<R> {
    if (addressKey(to) === addressKey(this.address)) {
      return Promise.reject(
        new AppError('bad_request', 'an actor cannot ask itself (its mailbox is busy with this turn)'),
      );
    }
    return this.services.askFromTurn<R>(this.target.lease, to, msg);
  }

  passivate(opts: { forget?: boolean } = {}): void {
    this.passivateRequested = true;
    this.forget = !!opts.forget;
  }

  retire(retainMs?: number): void {
    if (retainMs !== undefined && !(Number.isFinite(retainMs) && retainMs > 0))
      throw new AppError('bad_request', 'a retention must be a positive number of milliseconds');
    this.retired = { retainMs: retainMs ?? null };
  }

  fencedWrite<T>(write: (epoch: number) => Promise<T | false>): Promise<T> {
    const lease = this.target.lease;
    const run = () =>
      fencedWrite(
        { epoch: lease.epoch, isCurrent: () => this.services.isCurrent(lease), onFenced: () => this.onFenced() },
        write,
      );
    return this.traced
      ? tracedWrite(this.traced, 'external', run, (r) => (r.error ? (this.fenced ? false : undefined) : true))
      : run();
  }

  private onFenced(): void {
    this.fenced = true;
    this.services.onFenced(this.address);
  }

  /** The queued pushes as the turn's save keeps them in the actor's outbox (JSON); undefined when none. */
  outbox(): string | undefined {
    return this.pushes.length ? JSON.stringify(this.pushes) : undefined;
  }

  /** Sends the queued pushes; called only after the turn's snapshot is persisted. Whether there were any. */
  flush(publisher: PushPublisher, mark?: TurnMark): boolean {
    const pushed = this.pushes.length > 0;
    sendPushes(publisher, this.pushes.splice(0), mark);
    return pushed;
  }

  discard(): void {
    this.pushes.length = 0;
    this.passivateRequested = false;
    this.forget = false;
    delete this.retired;
  }
}
