import { performance } from 'node:perf_hooks';
import { AppError, toAppError } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import { joinRepeat, type Envelope } from './envelope.js';
import { deepFreeze, jsonCopy } from './json-copy.js';
import { addressKey } from './placement.js';
import type { SnapshotStore, TimerEntry, TurnReply, WriterLease } from './snapshot-store.js';
import { TimerHandles } from './timer-handles.js';
import { errorFromWire } from './transport.js';
import { TurnContext, type TurnServices } from './turn-context.js';
import { forgetSent, outboxEntry, outboxMark, sendUnsent } from './turn-outbox.js';
import { instrumentedTurn, probeClock, tracedWrite, turnProbe, type TracedTurn } from './turn-probe.js';
import type { ActorAddress, ActorBehavior } from './types.js';

/** What an activation needs from the system that hosts it. */
export interface ActivationHost extends TurnServices {
  readonly nodeId: string;
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly idleMs: number;
  /** How long a retired snapshot is kept by default (ms). */
  readonly retiredRetentionMs: number;
  /** A turn that held the mailbox longer than this is logged (ACTOR_SLOW_TURN_MS). */
  readonly slowTurnMs: number;
  publisher(): PushPublisher;
  /** True while the activation's lease may serve this message's turn (self-fencing, handoff). */
  mayServe(act: Activation, env: Envelope): boolean;
  /** Moves messages not yet started to the shard's handoff buffer. */
  buffer(act: Activation, items: Envelope[]): void;
  /** A write of this activation was fenced (counted unless `counted`): its shard has a newer owner. */
  rejected(act: Activation, counted?: boolean): void;
  deactivate(act: Activation, reason: 'idle' | 'requested' | 'error'): void;
  observe(event: 'activated' | 'dedupe' | 'depth' | 'expired' | 'turn', act: Activation, value?: number): void;
}

/**
 * One live actor: its state, timers and mailbox. Turns run strictly one at a time in arrival order;
 * a turn's reply is released only after its write-through to Redis succeeded under the epoch fence.
 *
 * Between turns the state is settled (decision 1120): parsed afresh from its serialisation and
 * deep-frozen, with that serialisation kept. A turn of a message the behaviour declares read-only runs
 * against the frozen state, so it cannot change it in place and needs no serialisation, comparison or
 * write-through; any other turn works on a copy parsed from the kept serialisation.
 */
export class Activation {
  readonly key: string;
  state: unknown;
  /** serialize() of the settled state and timers: the next turn's `before`. */
  private settled = '';
  readonly timers = new Map<string, TimerEntry>();
  readonly ready: Promise<void>;
  closed = false;
  private readonly queue: Envelope[] = [];
  /** The envelope queued or in its turn under each de-duplication id: a repeat joins it. */
  private readonly byDedupeId = new Map<string, Envelope>();
  private readonly handles = new TimerHandles(this.timers, (t) => this.timerDue(t));
  private running = false;
  private idleTimer?: NodeJS.Timeout;
  /** When the last turn ended (performance.now()): the idle timer counts from it. */
  private idleSince = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly host: ActivationHost,
    private readonly behavior: ActorBehavior,
    readonly address: ActorAddress,
    readonly lease: WriterLease,
  ) {
    this.key = addressKey(address);
    this.ready = this.load();
    this.ready.catch(() => undefined);
  }

  get kind(): string {
    return this.address.kind;
  }

  get depth(): number {
    return this.queue.length;
  }

  enqueue(env: Envelope): void {
    if (this.closed) return env.reject(new AppError('not_owner', 'actor was deactivated'));
    if (env.dedupeId && !env.timer) {
      const same = this.byDedupeId.get(env.dedupeId);
      if (same && !env.first) {
        joinRepeat(same, env);
        return this.host.observe('dedupe', this);
      }
      this.byDedupeId.set(env.dedupeId, env);
    }
    this.queue.push(env);
    this.host.observe('depth', this, 1);
    void this.pump();
  }

  /** `env` left this activation (answered, or handed to the next owner): a later repeat is a new delivery. */
  private left(env: Envelope): void {
    if (env.dedupeId && this.byDedupeId.get(env.dedupeId) === env) this.byDedupeId.delete(env.dedupeId);
  }

  /** A turn is running (or the activation is loading to run one). */
  get busy(): boolean {
    return this.running;
  }

  /** Resolves once no turn is running (the running turn, if any, has persisted or failed). */
  whenIdle(): Promise<void> {
    return this.running ? new Promise((r) => this.idleWaiters.push(r)) : Promise.resolve();
  }

  /** Stops the activation; returns the messages that never started, for the caller to re-route. */
  close(): Envelope[] {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.handles.stop();
    const left = this.queue.splice(0);
    this.byDedupeId.clear();
    this.host.observe('depth', this, -left.length);
    return left;
  }

  private async load(): Promise<void> {
    const { snapshot: snap, unsent } = await this.host.store.activate(this.lease.shard, this.key);
    if (unsent) await sendUnsent(this.host, this.lease.shard, this.key, unsent);
    this.state = snap ? snap.state : await this.fresh();
    for (const t of snap?.timers ?? []) this.timers.set(t.name, t);
    this.settle(this.serialize());
    this.handles.sync();
    this.host.observe('activated', this);
  }

  /** The state of an actor without a snapshot: its initial one, or what its behaviour recovers (decision 1104). */
  private async fresh(): Promise<unknown> {
    const initial = this.behavior.initialState(this.address);
    return this.behavior.recover ? this.behavior.recover(this.address, initial) : initial;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.ready;
      while (this.queue.length && !this.closed) {
        // A traced turn's start is taken before the lease check, so it never postdates the check.
        const checkedAt = turnProbe() ? probeClock() : 0;
        if (!this.host.mayServe(this, this.queue[0]!)) {
          // What this lease may no longer serve goes to the next owner; a nested ask it may serve stays.
          const keep = this.queue.filter((e) => this.host.mayServe(this, e));
          const items = this.queue.filter((e) => !keep.includes(e));
          this.queue.splice(0, this.queue.length, ...keep);
          this.host.observe('depth', this, -items.length);
          for (const e of items) this.left(e);
          this.host.buffer(this, items);
          if (!keep.length) break;
          continue;
        }
        const env = this.queue.shift()!;
        this.host.observe('depth', this, -1);
        const began = Date.now();
        // Its asker gave up: run now, the turn would act on a request the asker was told failed. The
        // asker gives up once Date.now() reaches the deadline, so a turn beginning at it does not run.
        if (env.deadline !== undefined && began >= env.deadline) {
          this.host.observe('expired', this);
          this.left(env);
          env.reject(new AppError('timeout', 'the ask expired before its turn began'));
          continue;
        }
        let value: unknown;
        try {
          value = await this.turn(env, checkedAt);
        } catch (e) {
          this.slowTurn(env, began, e);
          this.left(env);
          env.reject(e);
          continue;
        }
        this.slowTurn(env, began, 'ok');
        this.left(env);
        env.resolve(value);
      }
    } catch (e) {
      for (const env of this.close())
        env.reject(new AppError('service_unavailable', 'actor could not be activated', { cause: e }));
      this.host.deactivate(this, 'error');
    } finally {
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
      if (!this.closed && !this.queue.length) this.armIdle();
    }
  }

  /**
   * Deactivates the actor once it was idle for idleMs. One timer per idle period, not per turn: a turn
   * only moves `idleSince`, and a timer that fires early (turns ran since it was set) waits the rest.
   */
  private armIdle(): void {
    this.idleSince = performance.now();
    if (!this.idleTimer) this.waitIdle(this.host.idleMs);
  }

  private waitIdle(ms: number): void {
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      // Busy now: the turn's end arms it again.
      if (this.running || this.queue.length || this.closed) return;
      const left = this.idleSince + this.host.idleMs - performance.now();
      if (left > 0) this.waitIdle(left);
      else this.host.deactivate(this, 'idle');
    }, ms);
    this.idleTimer.unref();
  }

  private serialize(): string {
    return JSON.stringify({ s: this.state ?? null, t: [...this.timers.values()] });
  }

  /**
   * Makes `serialized` (serialize()'s form) the state between turns: a fresh parse, so no object a turn,
   * a push or a caller holds is part of it, deep-frozen; with `timers`, the timer table too.
   */
  private settle(serialized: string, timers = false): void {
    const { s, t } = JSON.parse(serialized) as { s: unknown; t: TimerEntry[] };
    this.state = deepFreeze(s);
    this.settled = serialized;
    if (!timers) return;
    this.timers.clear();
    for (const entry of t) this.timers.set(entry.name, entry);
  }

  /** Back to the state and timers of `before` (a failed or refused turn). */
  private restore(before: string): void {
    this.settle(before, true);
  }

  /**
   * A turn that held its mailbox longer than ACTOR_SLOW_TURN_MS is logged (warn) with its message type and
   * outcome: every ask queued behind it waited as long, and a sender on another node may have given up on
   * it (`no reply from node`). Asks its own turns made are named by their kind in the turn's message.
   */
  private slowTurn(env: Envelope, began: number, outcome: unknown): void {
    const ms = Date.now() - began;
    if (ms < this.host.slowTurnMs) return;
    const msg = env.msg as { type?: unknown } | undefined;
    this.host.logger.warn(
      {
        component: 'actors',
        actor: this.key,
        shard: this.lease.shard,
        epoch: this.lease.epoch,
        message: env.timer ? `timer ${env.timer}` : typeof msg?.type === 'string' ? msg.type : 'unknown',
        nested: !!env.nested,
        ms,
        waiting: this.queue.length,
        outcome: outcome === 'ok' ? 'ok' : toAppError(outcome).code,
      },
      'slow actor turn',
    );
  }

  /** One turn, instrumented when its message came in a trace or a turn probe is installed (tests only). */
  private turn(env: Envelope, checkedAt: number): Promise<unknown> {
    if (!env.trace && !turnProbe()) return this.step(env);
    const { shard, epoch } = this.lease;
    const subject = { node: this.host.nodeId, shard, epoch, actor: this.key, kind: this.kind };
    return instrumentedTurn(subject, env.trace, checkedAt, (traced) => this.step(env, traced));
  }

  private async step(env: Envelope, traced?: TracedTurn): Promise<unknown> {
    const started = performance.now();
    if (env.timer && !this.timers.has(env.timer)) return undefined;
    // A timer turn is never read-only: dropping its timer is a change to persist.
    const readOnly = !env.timer && this.behavior.readOnly?.(env.msg) === true;
    // A read is never looked up nor remembered (decision 1131): a repeat of it runs again.
    const replay =
      env.dedupeId && !env.first && !readOnly
        ? await this.host.store.lookupReply(this.lease.shard, this.key, env.dedupeId).catch(unavailable)
        : undefined;
    if (replay) {
      this.host.observe('dedupe', this);
      return unwrap(replay);
    }
    if (env.timer) this.timers.delete(env.timer);
    const before = env.timer ? this.serialize() : this.settled;
    const settledState = this.state;
    if (!readOnly) this.state = (JSON.parse(before) as { s: unknown }).s;
    const ctx = new TurnContext(this, this.host, traced);
    const reply = await this.run(ctx, env.msg, before, readOnly, env.shareReply === true);
    if (ctx.fenced) {
      this.restore(before);
      this.host.rejected(this, true);
      throw new AppError('not_owner', 'write fenced: the shard has a newer owner');
    }
    // A read-only turn ran on the frozen state: only a replaced state or a timer can have changed.
    const after = !reply.ok || (readOnly && !ctx.touched) ? this.settled : this.serialize();
    const changed = !!env.timer || after !== before;
    if (!changed) this.state = settledState;
    const mode = ctx.forget ? 'del' : changed || ctx.retired ? 'set' : 'none';
    const expireMs = mode === 'set' && ctx.retired ? this.retention(ctx.retired.retainMs) : undefined;
    // A reply is remembered only for a delivery that may be repeated and would change something when
    // run again: not one whose asker takes it now, not a read.
    const dedupeId = env.first?.awaited() || readOnly ? undefined : env.dedupeId;
    // Saved with the turn, its pushes outlive a node that dies before sending them (decision 1129).
    let pushes: string | undefined;
    if (mode !== 'none' || dedupeId) {
      const snapshot =
        mode === 'set' ? { state: this.state, timers: [...this.timers.values()], epoch: this.lease.epoch } : undefined;
      pushes = reply.ok ? outboxEntry(this.lease.epoch, ctx.outbox()) : undefined;
      const save = () =>
        this.host.store.saveTurn(this.lease, this.key, { mode, snapshot, expireMs, dedupeId, reply, pushes });
      const saved = await (
        traced ? tracedWrite(traced, 'snapshot', save, (r) => (r.error ? undefined : r.value)) : save()
      ).catch((e) => {
        // Unknown whether Redis applied it: drop this activation so the next turn reloads the snapshot.
        this.host.deactivate(this, 'error');
        return unavailable(e);
      });
      if (!saved) {
        this.restore(before);
        this.host.rejected(this);
        throw new AppError('not_owner', 'write rejected: the shard has a newer owner');
      }
    }
    if (changed) this.settle(after);
    this.handles.sync();
    if (reply.ok) {
      const publisher = this.host.publisher();
      // The answer follows the pushes' records: an acknowledged change is never missing from a history.
      if (ctx.flush(publisher, pushes ? outboxMark(this.key, pushes) : undefined)) await publisher.idle?.();
      if (pushes) forgetSent(this.host, this.lease.shard, this.key, pushes);
    }
    this.host.observe('turn', this, (performance.now() - started) / 1000);
    if (ctx.passivateRequested) this.host.deactivate(this, 'requested');
    return unwrap(reply);
  }

  /** A retired snapshot's expiry: the retention, counted from the last pending timer (it must find it). */
  private retention(retainMs: number | null): number {
    const lastDue = Math.max(Date.now(), ...[...this.timers.values()].map((t) => t.due));
    return lastDue - Date.now() + (retainMs ?? this.host.retiredRetentionMs);
  }

  /** Runs the behaviour; a failed turn leaves state and timers as they were before it. */
  private async run(
    ctx: TurnContext<unknown>,
    msg: unknown,
    before: string,
    readOnly: boolean,
    shared: boolean,
  ): Promise<TurnReply> {
    try {
      const value = await this.behavior.receive(ctx, msg);
      // A shared reply may hold parts of the state: no turn changes them later (a read-only turn's state
      // is frozen, a changing turn works on its own parse of the state), and the asker changes none.
      return { ok: true, value: value === undefined || shared ? value : jsonCopy(value) };
    } catch (e) {
      const err = toAppError(e);
      if (err.code === 'internal')
        this.host.logger.error({ component: 'actors', actor: this.key, readOnly, err: e }, 'actor turn failed');
      // A read-only turn that replaced nothing left the frozen state and the timers as they were.
      if (!readOnly || ctx.touched) this.restore(before);
      ctx.discard();
      return {
        ok: false,
        error: { code: err.code, message: err.code === 'internal' ? 'actor turn failed' : err.message },
      };
    }
  }

  /** A timer came due: its turn is queued (a timer turn's failure is logged, nobody waits for it). */
  private timerDue(t: TimerEntry): void {
    if (this.closed) return;
    this.enqueue({
      msg: t.msg,
      timer: t.name,
      resolve: () => undefined,
      reject: (err) =>
        this.host.logger.warn(
          { component: 'actors', actor: this.key, timer: t.name, err: (err as Error).message },
          'timer turn failed',
        ),
    });
  }
}

/** Redis failures are retryable for the sender (same de-duplication id), never `internal`. */
function unavailable(cause: unknown): never {
  throw new AppError('service_unavailable', 'actor state store unavailable', { cause });
}

function unwrap(reply: TurnReply): unknown {
  if (reply.ok) return reply.value;
  throw errorFromWire(reply.error ?? { code: 'internal', message: 'actor turn failed' });
}
