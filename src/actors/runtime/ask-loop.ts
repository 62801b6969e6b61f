import { AppError, isTransient } from '../../kernel/errors.js';
import { inSpan, SpanKind, tracingOn } from '../../observability/tracing.js';
import type { ActorAddress } from './types.js';

export interface AskRoute {
  nodeId: string;
  /** Budget of one remote attempt: a dead owner is given up on after this. */
  attemptMs: number;
  /** Where to send a message for `shard` (`nested`: asked by a turn, served by a holder handing it off). */
  /** A string when known at once (held here, or remembered): no promise for the common case. */
  resolveOwner(shard: number, nested?: boolean): string | Promise<string>;
  deliverLocal(plan: AskPlan, first?: FirstDelivery): Promise<unknown>;
  request(
    node: string,
    body: { to: ActorAddress; msg: unknown; dedupeId: string; attempt: number; deadline: number; nested?: boolean },
    timeoutMs: number,
  ): Promise<unknown>;
  routed(route: 'local' | 'remote'): void;
  /** Forgets the remembered owner of `shard` (an attempt there failed). */
  unroute(shard: number): void;
}

/**
 * Marks the first delivery of an ask whose de-duplication id the ask minted itself, made in process:
 * nothing can be remembered under that id yet, and while `awaited()` the reply goes straight back to
 * the asker, who then never sends the id again. Any later delivery (a retry, a forward after handoff)
 * goes without it and takes the full de-duplication path.
 */
export interface FirstDelivery {
  awaited(): boolean;
}

export interface AskPlan {
  to: ActorAddress;
  /** addressKey(to), made once per ask. */
  key: string;
  shard: number;
  msg: unknown;
  dedupeId: string;
  /** The ask minted `dedupeId` (no caller-given id, so no earlier delivery of it can exist). */
  minted: boolean;
  /**
   * Date.now() after which the ask fails: `timeout`, or the last error when it was no routing refusal. It travels with every
   * delivery: a turn that would begin after it is not run (decision 1140).
   */
  deadline: number;
  /** Asked by a running turn: served by a shard's holder during its handoff (see RedisActorSystem.askFromTurn). */
  nested?: boolean;
  /** A local delivery's reply is handed over without a copy (AskOptions.shareReply). */
  shareReply?: boolean;
}

/**
 * Delivers one message to wherever its actor lives: resolve the owner, send, and on `not_owner`,
 * `timeout` or `service_unavailable` re-resolve and retry with back-off, always with the same
 * de-duplication id so a repeat is answered from the remembered reply.
 */
export async function askWithRetry(route: AskRoute, plan: AskPlan): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    const remaining = plan.deadline - Date.now();
    try {
      if (remaining <= 0) throw new AppError('timeout', 'actor did not answer in time');
      const known = route.resolveOwner(plan.shard, plan.nested);
      const owner = typeof known === 'string' ? known : await known;
      const local = owner === route.nodeId;
      route.routed(local ? 'local' : 'remote');
      if (local) {
        const first = plan.minted && attempt === 1 ? new FirstLocalAttempt() : undefined;
        return await withTimeout(route.deliverLocal(plan, first), remaining, first);
      }
      return await route.request(
        owner,
        {
          to: plan.to,
          msg: plan.msg,
          dedupeId: plan.dedupeId,
          attempt,
          deadline: plan.deadline,
          ...(plan.nested ? { nested: true } : {}),
        },
        Math.min(remaining, route.attemptMs),
      );
    } catch (e) {
      if (!isTransient(e)) throw e;
      route.unroute(plan.shard);
      // Past the deadline a routing refusal is not the answer: the asker never reached an owner in time.
      if (Date.now() >= plan.deadline)
        throw e.code === 'not_owner' ? new AppError('timeout', 'actor did not answer in time') : e;
      await delay(Math.min(25 * 2 ** Math.min(attempt, 4), Math.max(0, plan.deadline - Date.now())));
    }
  }
}

/** askWithRetry, in a client span of the ask when tracing is on (off: no span options or closure per ask). */
export function askTraced(route: AskRoute, plan: AskPlan): Promise<unknown> {
  if (!tracingOn()) return askWithRetry(route, plan);
  const { kind, tenant } = plan.to;
  return inSpan(
    `actor ask ${kind}`,
    { kind: SpanKind.CLIENT, attributes: { 'actor.kind': kind, 'actor.shard': plan.shard, tenant } },
    () => askWithRetry(route, plan),
  );
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A first local delivery, awaited until its attempt times out (a class: no closures per ask). */
class FirstLocalAttempt implements FirstDelivery {
  private waiting = true;
  awaited(): boolean {
    return this.waiting;
  }
  abandon(): void {
    this.waiting = false;
  }
}

/** `p`, or `timeout` after `ms` (the attempt abandoned): one promise and one timer per ask, no race. */
function withTimeout<T>(p: Promise<T>, ms: number, attempt?: FirstLocalAttempt): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      attempt?.abandon();
      reject(new AppError('timeout', 'actor did not answer in time'));
    }, ms);
    p.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
