import type { TraceContext } from '../../observability/tracing.js';
import type { FirstDelivery } from './ask-loop.js';
import { jsonCopy } from './json-copy.js';

/** How one delivery reaches its actor (an AskPlan is one). */
export interface Delivery {
  dedupeId?: string;
  /** Asked by a running turn (see askFromTurn). */
  nested?: boolean;
  /** addressKey(to) and its shard, when the asker made them. */
  key?: string;
  shard?: number;
  /** The asker's deadline: a turn that would begin later is not run. */
  deadline?: number;
  /** The asker takes the reply without a copy (AskOptions.shareReply). */
  shareReply?: boolean;
}

/** A message waiting in a mailbox, with the caller's continuation. */
export interface Envelope {
  msg: unknown;
  dedupeId?: string;
  /** Set for timer turns: the timer's name. */
  timer?: string;
  /** The ask's first, in-process delivery of a minted id: no reply to look up; none to remember while awaited. */
  first?: FirstDelivery;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** The sender's trace context (tracing on, an ask in a span): the turn's span is its child. */
  trace?: TraceContext;
  /**
   * Date.now() past which the asker no longer waits: a delivery whose turn would begin later is answered
   * `timeout` unrun (decision 1140). Absent for timer turns.
   */
  deadline?: number;
  /**
   * Asked by a turn of the same shard on this node while the shard is handed off: served here under the
   * lease still held (the handoff waits for that turn), never held for the next owner.
   */
  nested?: boolean;
  /** The asker takes the turn's reply as the behaviour returned it (AskOptions.shareReply); else a copy. */
  shareReply?: boolean;
}

/**
 * A repeat of a delivery still queued or in its turn (a sender whose attempt ran out re-sends with the
 * same id) is answered with it, instead of waiting at the back of the mailbox for the remembered reply:
 * under load, each re-send would otherwise add a turn and the answer would come only after the last
 * one, past the asker's budget (the capacity class of docs/reliability.md's runs 49 and 64).
 */
export function joinRepeat(same: Envelope, repeat: Envelope): void {
  const { resolve, reject } = same;
  // Someone still waits while either asker does (a client re-sent its request id in a new call).
  same.deadline =
    same.deadline === undefined || repeat.deadline === undefined ? undefined : Math.max(same.deadline, repeat.deadline);
  same.resolve = (value) => {
    resolve(value);
    // Each asker gets its own copy of the answer (a local asker may change what it was handed).
    repeat.resolve(value === undefined ? undefined : jsonCopy(value));
  };
  same.reject = (err) => {
    reject(err);
    repeat.reject(err);
  };
}
