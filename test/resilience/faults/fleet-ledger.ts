/**
 * What the fleet-day test's clients did and saw, kept to judge the day afterwards: each refusal by code
 * (a `permission_denied` of a method the role has is a finding), each invite acknowledged to a caller and
 * each invite a callee received, each acknowledged write (calls accepted and ended, admissions, meetings
 * ended), and each client's reconnections with the time from losing the connection (or getting the
 * network back after a blip) to its resumption (`pushStreams`).
 */

/**
 * Codes a client may meet while nodes restart or die and its transport drops, or a host admitting a full
 * room meets the per-connection call rate (`rate_limited`, retried after its `retryAfter`): it retries;
 * nothing acknowledged is lost.
 */
export const TRANSIENT = new Set([
  'rate_limited',
  'timeout',
  'disconnected',
  'not_owner',
  'service_unavailable',
  'network',
  'token_expired',
]);

export interface CallAcks {
  caller: string;
  callee: string;
  /** The callee was away (its connection down) when the caller's initCall was acknowledged. */
  calleeAway: boolean;
  /** When the caller's initCall was acknowledged (UTC time of day). */
  at?: string;
  accepted?: boolean;
  /** The status the acknowledged endCall answered. */
  ended?: string;
}

export class Ledger {
  /** Refusals of something the role may do: `permission_denied` (the refresh defect's signature). */
  readonly permissionRefusals: string[] = [];
  /** Refusals and failures by `method:code`. */
  readonly failures = new Map<string, number>();
  /** Failures whose code is neither transient nor expected for the method, with their message (first few). */
  readonly unexpected: string[] = [];
  /** Acknowledged invites by callee user id: the call ids each callee must receive. */
  readonly invited = new Map<string, Set<string>>();
  readonly calls = new Map<string, CallAcks>();
  /** Calls whose acceptCall was acknowledged to the callee. */
  readonly accepted = new Set<string>();
  /** Acknowledged writes not found afterwards (in the meeting, the call's record, the event). */
  readonly lostWrites: string[] = [];
  /** Refreshes (REST), then the rights checked after each (a call that needs a permission of the role). */
  readonly refreshes = { done: 0, failed: 0, checked: 0 };
  /** The first refresh failures, with when and who. */
  readonly refreshFailures: string[] = [];
  /** Hand-overs of a fresh token to a live connection (`refreshToken`) and what they answered. */
  readonly handOvers = { done: 0, failed: 0, withoutRights: 0 };
  /** Reconnections measured: ms from the connection lost (or the network back) to `pushStreams`. */
  readonly resumeMs: number[] = [];
  readonly resumeMsAfterBlip: number[] = [];
  readonly resyncs: string[] = [];
  /**
   * python-socketio connections found wedged by the fleet's client (connected at the Socket.IO level over
   * a closed Engine.IO connection, a library race; decision 1183) and made again, with when and whose.
   */
  readonly pythonWedges: string[] = [];
  /** Sessions the service ended on purpose, by code. */
  readonly sessionsEnded = new Map<string, number>();
  /** Per meeting: acknowledged admissions, the last acknowledged notify seq, and whether endMeeting was acknowledged. */
  readonly meetings = new Map<string, { admitted: Set<string>; lastSeq: number; ended: boolean; recorded: boolean }>();

  count(method: string, code: string): void {
    const k = `${method}:${code}`;
    this.failures.set(k, (this.failures.get(k) ?? 0) + 1);
  }

  /**
   * A refusal or failure of `method` by `who`. `expected` are codes the method may answer in the day's
   * races (accepting a call its caller already ended); a `permission_denied` is always a finding.
   */
  failed(who: string, method: string, e: unknown, expected: readonly string[] = []): void {
    const code = codeOf(e);
    this.count(method, code);
    if (code === 'permission_denied')
      this.permissionRefusals.push(`${who} ${method}: ${(e as Error)?.message ?? String(e)}`);
    else if (!TRANSIENT.has(code) && !expected.includes(code) && this.unexpected.length < 20)
      this.unexpected.push(`${who} ${method} ${code}: ${(e as Error)?.message ?? String(e)}`);
  }

  unexpectedCount(): number {
    let n = 0;
    for (const [k, v] of this.failures) {
      const code = k.slice(k.indexOf(':') + 1);
      if (code !== 'permission_denied' && !TRANSIENT.has(code) && !EXPECTED_RACES.has(k)) n += v;
    }
    return n;
  }

  invite(caller: string, callee: string, callId: string, calleeAway: boolean): void {
    let set = this.invited.get(callee);
    if (!set) this.invited.set(callee, (set = new Set()));
    set.add(callId);
    this.calls.set(callId, { caller, callee, calleeAway, at: new Date().toISOString().slice(11) });
  }

  meeting(eventId: string) {
    let m = this.meetings.get(eventId);
    if (!m) this.meetings.set(eventId, (m = { admitted: new Set(), lastSeq: 0, ended: false, recorded: false }));
    return m;
  }
}

/** Refusals the day's own races produce, by `method:code` (nothing acknowledged is lost by them). */
export const EXPECTED_RACES = new Set([
  // The callee answers an invite its caller already ended (a replayed one, or a slow accept).
  'acceptCall:invalid_state',
  // A consent answered after the request concluded (the host ended the meeting, or another answer timed it out).
  'consentToRecording:invalid_state',
  'consentToRecording:consent_request_not_found',
]);

/** The code of a thrown refusal: a ConsultError's, else `network` for a failed request. */
export function codeOf(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  // A request whose connection failed (reset by a node going away, refused) was not answered: `network`.
  return typeof code === 'string' && !/^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code) ? code : 'network';
}

/** The largest of `xs` (0 for none). */
export const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

/** The `q` quantile of `xs` (0 for none). */
export function quantile(xs: number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
