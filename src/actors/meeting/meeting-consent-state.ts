// The meeting's recording consent (decision 910): its state, what members are asked and shown, and how a
// request ends. The turns are in meeting-consent.ts (requests and answers) and meeting-consent-holds.ts
// (joiners held out until they agree).
import { rooms } from '../../realtime/rooms.js';
import { hostRooms, publish, type Ctx } from './meeting-state.js';
import {
  CONSENT_QUESTION,
  type ConsentAsk,
  type ConsentMeetingEventType,
  type ConsentView,
  type MeetingDetails,
  type MeetingMember,
  type RecordingConsentAnswer,
  type RecordingConsentResultPush,
} from '../../contracts/meeting.schema.js';
import type { ConsentRequestState, ConsentState, MeetingState } from './meeting.schema.js';

/** The timer that cancels an unanswered consent request and releases expired holds (one per meeting). */
export const CONSENT_TIMER = 'recordingConsent';

/** Decided requests remembered by id, so a repeated start or answer learns the outcome. */
export const RECENT = 20;

export type Policy = ConsentRequestState['policy'];

export type Outcome = NonNullable<ConsentRequestState['outcome']>;

export type Asked = ConsentRequestState['required'][number];

/** The meeting's consent state, created on first use (snapshots written before decision 910 lack it). */
export function consentOf(s: MeetingState): ConsentState {
  s.consent ??= { recent: [], granted: {}, holds: [] };
  return s.consent;
}

/**
 * Whose answer a policy asks for: every person (`all`) or the patients (`patients`); headsets are
 * equipment and never asked. A member whose tenant role is unknown (an older snapshot) is asked.
 */
export function asks(policy: Policy, m: Pick<MeetingMember, 'role' | 'tenantRole'>): boolean {
  if (m.role === 'device') return false;
  return policy === 'all' || m.tenantRole === undefined || m.tenantRole === 'patient';
}

export function askOf(ctx: Ctx, r: ConsentRequestState, required: boolean, late = false): ConsentAsk {
  return {
    eventId: ctx.state.eventId,
    requestId: r.requestId,
    question: CONSENT_QUESTION,
    ...(r.reason ? { reason: r.reason } : {}),
    policy: r.policy,
    requestedBy: r.requestedBy,
    requestedAt: r.requestedAt,
    expiresAt: new Date(r.expiresAt).toISOString(),
    required,
    ...(late ? { late } : {}),
  };
}

export function answerOf(
  r: ConsentRequestState,
  who: Asked,
  consent: boolean,
  at: string,
  flags: { late?: boolean; implicit?: boolean } = {},
): RecordingConsentAnswer {
  return {
    requestId: r.requestId,
    userId: who.userId,
    username: who.username,
    role: who.role,
    tenantRole: who.tenantRole,
    question: CONSENT_QUESTION,
    ...(r.reason ? { reason: r.reason } : {}),
    policy: r.policy,
    requestedBy: r.requestedBy,
    requestedAt: r.requestedAt,
    consent,
    at,
    late: flags.late ?? false,
    implicit: flags.implicit ?? false,
  };
}

export function toUser(ctx: Ctx, userId: string, ask: ConsentAsk): void {
  ctx.emit(rooms.user(ctx.address.tenant, userId), 'recordingConsentRequested', ask);
}

/** The consent request and the held joiners as the meeting's details show them. */
export function consentView(s: MeetingState): ConsentView | undefined {
  const r = s.consent?.request;
  if (!r) return undefined;
  return {
    requestId: r.requestId,
    state: r.outcome ?? 'pending',
    policy: r.policy,
    requestedBy: r.requestedBy,
    requestedAt: r.requestedAt,
    expiresAt: new Date(r.expiresAt).toISOString(),
    ...(r.reason ? { reason: r.reason } : {}),
    required: r.required.map((q) => ({ userId: q.userId, username: q.username, ...(r.answers[q.userId] ?? {}) })),
    held: (s.consent?.holds ?? []).map((h) => ({
      userId: h.userId,
      username: h.username,
      since: h.since,
      requestId: h.requestId,
    })),
  };
}

/** MeetingDetails with the consent request, when there is one. */
export function withConsent(s: MeetingState, d: MeetingDetails): MeetingDetails {
  const v = consentView(s);
  return v ? { ...d, recordingConsent: v } : d;
}

/** Keeps the consent timer due at the earliest open request or hold expiry. */
export function armConsentTimer(ctx: Ctx): void {
  const c = consentOf(ctx.state);
  const due = [...(c.request && !c.request.outcome ? [c.request.expiresAt] : []), ...c.holds.map((h) => h.expiresAt)];
  if (!due.length) return ctx.clearTimer(CONSENT_TIMER);
  ctx.setTimer(CONSENT_TIMER, Math.max(0, Math.min(...due) - Date.now()), { type: 'consentTimeout' });
}

/** Who, present now, the request still needs a yes from: everyone asked, plus members the policy asks who came in since. */
export function needed(s: MeetingState, r: ConsentRequestState): string[] {
  const present = Object.values(s.members).filter((m) => asks(r.policy, m));
  const ids = new Set([...r.required.map((q) => q.userId), ...present.map((m) => m.userId)]);
  return [...ids].filter((u) => r.answers[u]?.consent !== true);
}

/** Ends a request: remembered by id, a meetingEvent for everyone, the outcome (who refused, who did not answer) to the requester and hosts. */
export function conclude(ctx: Ctx, r: ConsentRequestState, outcome: Outcome): void {
  const c = consentOf(ctx.state);
  r.outcome = outcome;
  c.recent = [...c.recent.filter((x) => x.requestId !== r.requestId), { requestId: r.requestId, outcome }].slice(
    -RECENT,
  );
  const name = (u: string) => ({
    userId: u,
    username: r.required.find((q) => q.userId === u)?.username ?? ctx.state.members[u]?.username ?? u,
  });
  const refusedBy = Object.entries(r.answers)
    .filter(([, a]) => !a.consent)
    .map(([u]) => name(u));
  const unanswered =
    outcome === 'granted'
      ? []
      : needed(ctx.state, r)
          .filter((u) => !r.answers[u])
          .map(name);
  const types: Record<Outcome, ConsentMeetingEventType> = {
    granted: 'recordingConsentGranted',
    refused: 'recordingConsentRefused',
    timedOut: 'recordingConsentTimedOut',
  };
  const type = types[outcome];
  publish(ctx, type, undefined, {
    requestId: r.requestId,
    refusedBy: refusedBy.map((x) => x.userId),
    unanswered: unanswered.map((x) => x.userId),
  });
  const push: RecordingConsentResultPush = {
    eventId: ctx.state.eventId,
    requestId: r.requestId,
    outcome,
    refusedBy,
    unanswered,
  };
  const to = new Set([rooms.user(ctx.address.tenant, r.requestedBy), ...hostRooms(ctx)]);
  ctx.emit([...to], 'recordingConsentResult', push);
  armConsentTimer(ctx);
}

export function lateAsk(ctx: Ctx, h: ConsentState['holds'][number], policy: Policy): ConsentAsk {
  const s = ctx.state;
  return {
    eventId: s.eventId,
    requestId: h.requestId,
    question: CONSENT_QUESTION,
    policy,
    requestedBy: s.recording.startedBy ?? '',
    requestedAt: h.since,
    expiresAt: new Date(h.expiresAt).toISOString(),
    required: true,
    late: true,
  };
}

/** What consentToRecording answers: the request's state, and for a held joiner what became of their join. */
export interface ConsentAnswerResult {
  requestId: string;
  state: ConsentView['state'];
  consent: boolean;
  recordingConsent?: ConsentView;
  /** A held joiner who agreed: their join details (as joinEvent gives them) or their place in the waiting room. */
  entered?: unknown;
}
