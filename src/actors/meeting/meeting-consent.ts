import { randomUUID } from 'node:crypto';
import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import type { Caller } from '../../kernel/caller.js';
import {
  details,
  hostRooms,
  publish,
  requireHost,
  waitingViews,
  type Ctx,
  type MeetingActorDeps,
  type RecordingOpts,
} from './meeting-state.js';
import {
  CONSENT_QUESTION,
  type ConsentAsk,
  type ConsentMeetingEventType,
  type ConsentSettings,
  type ConsentView,
  type MeetingDetails,
  type MeetingMember,
  type RecordingConsentAnswer,
  type RecordingConsentResultPush,
} from '../../contracts/meeting.schema.js';
import type { ConsentRequestState, ConsentState, DeviceJoin, MeetingMsg, MeetingState } from './meeting.schema.js';

/** The timer that cancels an unanswered consent request and releases expired holds (one per meeting). */
export const CONSENT_TIMER = 'recordingConsent';
/** Decided requests remembered by id, so a repeated start or answer learns the outcome. */
const RECENT = 20;

type Policy = ConsentRequestState['policy'];
type Outcome = NonNullable<ConsentRequestState['outcome']>;
type Asked = ConsentRequestState['required'][number];

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

function askOf(ctx: Ctx, r: ConsentRequestState, required: boolean, late = false): ConsentAsk {
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

function toUser(ctx: Ctx, userId: string, ask: ConsentAsk): void {
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
function needed(s: MeetingState, r: ConsentRequestState): string[] {
  const present = Object.values(s.members).filter((m) => asks(r.policy, m));
  const ids = new Set([...r.required.map((q) => q.userId), ...present.map((m) => m.userId)]);
  return [...ids].filter((u) => r.answers[u]?.consent !== true);
}

/**
 * startRecording under a consent policy: opens one request (a second start while it is open, or a
 * retried start of a decided request, returns it), asks every person present (the requester's own
 * request counts as their yes), and starts at once when nobody else must answer.
 */
export async function requestConsent(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'startRecording' }>,
  settings: ConsentSettings,
  by: RecordingOpts = {},
): Promise<MeetingDetails> {
  const s = ctx.state;
  if (s.ended) throw new AppError('invalid_state', 'The meeting has ended');
  const c = consentOf(s);
  if (c.request && !c.request.outcome) return withConsent(s, details(s));
  if (msg.requestId && c.recent.some((x) => x.requestId === msg.requestId)) return withConsent(s, details(s));
  const policy = settings.policy as Policy;
  const now = Date.now();
  const at = new Date(now).toISOString();
  const r: ConsentRequestState = {
    requestId: msg.requestId ?? randomUUID(),
    requestedBy: msg.caller.userId,
    requestedAt: at,
    expiresAt: now + settings.timeoutSeconds * 1000,
    policy,
    ...(msg.reason ? { reason: msg.reason } : {}),
    required: Object.values(s.members)
      .filter((m) => asks(policy, m))
      .map((m) => ({ userId: m.userId, username: m.username, role: m.role, tenantRole: m.tenantRole ?? '' })),
    answers: {},
    ...(by.actorId ? { actorId: by.actorId } : {}),
    ...(by.via === 'hub' || by.via === 'rest' ? { via: by.via } : {}),
    ...(by.ip ? { ip: by.ip } : {}),
  };
  const self = r.required.find((q) => q.userId === msg.caller.userId);
  if (self) {
    await deps.recordConsent(ctx.address.tenant, s.eventId, answerOf(r, self, true, at, { implicit: true }));
    r.answers[self.userId] = { consent: true, at };
  }
  c.request = r;
  publish(ctx, 'recordingConsentRequested', msg.caller.userId, {
    requestId: r.requestId,
    policy,
    required: r.required.map((q) => q.userId),
    expiresAt: new Date(r.expiresAt).toISOString(),
  });
  for (const m of Object.values(s.members)) {
    if (m.role !== 'device')
      toUser(
        ctx,
        m.userId,
        askOf(
          ctx,
          r,
          r.required.some((q) => q.userId === m.userId),
        ),
      );
  }
  await settle(ctx, deps);
  armConsentTimer(ctx);
  return withConsent(s, details(s));
}

/** Asks members who came in while a request is open and whom its policy asks (joined or admitted since). */
export function askNewcomers(ctx: Ctx): void {
  const r = ctx.state.consent?.request;
  if (!r || r.outcome) return;
  for (const m of Object.values(ctx.state.members)) {
    if (!asks(r.policy, m) || r.required.some((q) => q.userId === m.userId)) continue;
    r.required.push({ userId: m.userId, username: m.username, role: m.role, tenantRole: m.tenantRole ?? '' });
    toUser(ctx, m.userId, askOf(ctx, r, true));
  }
}

/** Starts the recording once everyone present whom the policy asks said yes; never twice. */
async function settle(ctx: Ctx, deps: MeetingActorDeps): Promise<void> {
  const s = ctx.state;
  const r = s.consent!.request!;
  if (r.outcome || needed(s, r).length) return;
  if (!s.recording.active) {
    await deps.startRecording(ctx.address.tenant, s.eventId, r.requestedBy, {
      consented: { requestId: r.requestId },
      ...(r.actorId ? { actorId: r.actorId } : {}),
      ...(r.via ? { via: r.via } : {}),
      ...(r.ip ? { ip: r.ip } : {}),
    });
    s.recording = { active: true, startedAt: new Date().toISOString(), startedBy: r.requestedBy };
  }
  s.consent!.granted = Object.fromEntries(
    Object.entries(r.answers)
      .filter(([, a]) => a.consent)
      .map(([u, a]) => [u, a.at]),
  );
  conclude(ctx, r, 'granted');
  publish(ctx, 'recordingStarted', r.requestedBy, { requestId: r.requestId });
}

/** Ends a request: remembered by id, a meetingEvent for everyone, the outcome (who refused, who did not answer) to the requester and hosts. */
function conclude(ctx: Ctx, r: ConsentRequestState, outcome: Outcome): void {
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

/** What consentToRecording answers: the request's state, and for a held joiner what became of their join. */
export interface ConsentAnswerResult {
  requestId: string;
  state: ConsentView['state'];
  consent: boolean;
  recordingConsent?: ConsentView;
  /** A held joiner who agreed: their join details (as joinEvent gives them) or their place in the waiting room. */
  entered?: unknown;
}

/**
 * consentToRecording: one answer per person and request. A "no" cancels the request, a last "yes"
 * starts the recording; repeating the same answer changes nothing, changing it is refused.
 */
export async function answerConsent(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'consentToRecording' }>,
  enter: (hold: ConsentState['holds'][number]) => Promise<unknown>,
): Promise<ConsentAnswerResult> {
  const s = ctx.state;
  if (s.ended) throw new AppError('invalid_state', 'The meeting has ended');
  // Headsets are equipment: no request asks a device account, whatever the meeting.
  if (msg.caller.role === 'device')
    throw new AppError('consent_not_required', 'A headset is not asked for consent to a recording');
  const c = consentOf(s);
  const hold = c.holds.find((h) => h.userId === msg.caller.userId && h.requestId === msg.requestId);
  if (hold) return answerHold(ctx, deps, msg, hold, enter);
  const r = c.request;
  if (!r || r.requestId !== msg.requestId || !s.members[msg.caller.userId])
    throw new AppError('consent_request_not_found', 'No such recording consent request for you in this meeting');
  const result = (): ConsentAnswerResult => ({
    requestId: r.requestId,
    state: r.outcome ?? 'pending',
    consent: msg.consent,
    recordingConsent: consentView(s)!,
  });
  const prior = r.answers[msg.caller.userId];
  if (prior && prior.consent === msg.consent) return result();
  if (prior) throw new AppError('consent_already_given', 'You already answered this request');
  let who = r.required.find((q) => q.userId === msg.caller.userId);
  const member = s.members[msg.caller.userId]!;
  if (!who && !r.outcome && asks(r.policy, member)) askNewcomers(ctx);
  who = r.required.find((q) => q.userId === msg.caller.userId);
  if (!who && !asks(r.policy, member))
    throw new AppError('consent_not_required', 'Your consent is not asked for this recording');
  if (r.outcome || !who) throw new AppError('invalid_state', `The consent request is already ${r.outcome}`);
  const at = new Date().toISOString();
  await deps.recordConsent(ctx.address.tenant, s.eventId, answerOf(r, who, msg.consent, at));
  r.answers[who.userId] = { consent: msg.consent, at };
  publish(ctx, 'recordingConsentAnswered', who.userId, {
    requestId: r.requestId,
    userId: who.userId,
    consent: msg.consent,
  });
  if (msg.consent) await settle(ctx, deps);
  else conclude(ctx, r, 'refused');
  return result();
}

/**
 * Holds a joiner out of a meeting whose recording runs under a consent policy, when the policy asks
 * them and they have not agreed to this recording: the ack says `consentRequired` and they are asked.
 */
export async function holdForConsent(
  ctx: Ctx,
  deps: MeetingActorDeps,
  caller: Caller,
  join: {
    role: 'host' | 'participant' | 'guest' | 'device';
    invited: boolean;
    thenWait: boolean;
    waitExpirySeconds: number;
    code?: string;
    device?: DeviceJoin;
  },
) {
  const s = ctx.state;
  if (!s.recording.active || join.role === 'host') return undefined;
  const c = consentOf(s);
  if (c.granted[caller.userId]) return undefined;
  const role = join.role === 'device' || caller.role === 'device' ? 'device' : join.role;
  const settings = await deps.consentSettings(ctx.address.tenant);
  if (settings.policy === 'off' || !asks(settings.policy, { role, tenantRole: caller.role })) return undefined;
  const now = Date.now();
  let hold = c.holds.find((h) => h.userId === caller.userId);
  if (!hold) {
    hold = {
      userId: caller.userId,
      username: caller.username,
      requestId: `late-${randomUUID()}`,
      since: new Date(now).toISOString(),
      expiresAt: now + settings.timeoutSeconds * 1000,
      role,
      thenWait: join.thenWait,
      kind: role === 'device' ? 'device' : 'person',
      invited: join.invited,
      waitExpirySeconds: join.waitExpirySeconds,
      ...(join.code ? { code: join.code } : {}),
      ...(join.device ? { device: join.device } : {}),
      caller,
    };
    c.holds.push(hold);
    publish(ctx, 'recordingConsentHeld', caller.userId, { userId: caller.userId, requestId: hold.requestId });
  } else hold.caller = caller;
  const ask = lateAsk(ctx, hold, settings.policy as Policy);
  toUser(ctx, caller.userId, ask);
  armConsentTimer(ctx);
  return { status: 'consentRequired' as const, eventId: s.eventId, since: hold.since, recordingConsent: ask };
}

function lateAsk(ctx: Ctx, h: ConsentState['holds'][number], policy: Policy): ConsentAsk {
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

async function answerHold(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'consentToRecording' }>,
  hold: ConsentState['holds'][number],
  enter: (hold: ConsentState['holds'][number]) => Promise<unknown>,
): Promise<ConsentAnswerResult> {
  const s = ctx.state;
  const c = consentOf(s);
  const at = new Date().toISOString();
  const r: ConsentRequestState = {
    requestId: hold.requestId,
    requestedBy: s.recording.startedBy ?? '',
    requestedAt: hold.since,
    expiresAt: hold.expiresAt,
    policy: (c.request?.policy ?? 'all') as Policy,
    required: [],
    answers: {},
  };
  const who = { userId: hold.userId, username: hold.username, role: hold.role, tenantRole: hold.caller.role };
  await deps.recordConsent(ctx.address.tenant, s.eventId, answerOf(r, who, msg.consent, at, { late: true }));
  c.holds = c.holds.filter((h) => h !== hold);
  publish(ctx, 'recordingConsentAnswered', hold.userId, {
    requestId: hold.requestId,
    userId: hold.userId,
    consent: msg.consent,
    late: true,
  });
  publish(ctx, 'recordingConsentHoldEnded', hold.userId, {
    userId: hold.userId,
    outcome: msg.consent ? 'granted' : 'refused',
  });
  armConsentTimer(ctx);
  if (!msg.consent) return { requestId: hold.requestId, state: 'refused', consent: false };
  c.granted[hold.userId] = at;
  return { requestId: hold.requestId, state: 'granted', consent: true, entered: await enter(hold) };
}

/** Timer turn: an open request past its time is cancelled (the hosts learn who did not answer); expired holds are let go. */
export function consentTimeout(ctx: Ctx): void {
  const c = consentOf(ctx.state);
  const now = Date.now();
  const r = c.request;
  if (r && !r.outcome && r.expiresAt <= now) conclude(ctx, r, 'timedOut');
  for (const h of c.holds.filter((x) => x.expiresAt <= now)) releaseHold(ctx, h.userId, 'expired');
  armConsentTimer(ctx);
}

/**
 * A host admits waiting entries while a consented recording runs: those the policy asks who have not
 * agreed to it are held for their consent instead of entering, and enter on yes as any held joiner
 * (the host's admission stands). Returns the held user ids; the admission goes on for the others.
 */
export async function holdAdmissions(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'admit' }>,
): Promise<string[]> {
  const s = ctx.state;
  const queue = s.waiting ?? [];
  const targets = queue.filter((e) => msg.all || e.userId === msg.userId);
  if (!s.recording.active || !targets.length) return [];
  await requireHost(ctx, deps, msg.caller);
  const settings = await deps.consentSettings(ctx.address.tenant);
  if (settings.policy === 'off') return [];
  const policy = settings.policy as Policy;
  const c = consentOf(s);
  const now = Date.now();
  const held = targets.filter((e) => !c.granted[e.userId] && asks(policy, { role: e.role, tenantRole: e.caller.role }));
  if (!held.length) return [];
  const from = queue.findIndex((e) => held.includes(e));
  s.waiting = queue.filter((e) => !held.includes(e));
  for (const e of held) {
    const hold = {
      userId: e.userId,
      username: e.username,
      requestId: `late-${randomUUID()}`,
      since: new Date(now).toISOString(),
      expiresAt: now + settings.timeoutSeconds * 1000,
      role: e.role,
      thenWait: false,
      kind: e.kind,
      invited: e.invited,
      waitExpirySeconds: 0,
      ...(e.code ? { code: e.code } : {}),
      ...(e.device ? { device: e.device } : {}),
      caller: e.caller,
    };
    c.holds = [...c.holds.filter((h) => h.userId !== e.userId), hold];
    publish(ctx, 'recordingConsentHeld', msg.caller.userId, { userId: e.userId, requestId: hold.requestId });
    toUser(ctx, e.userId, lateAsk(ctx, hold, policy));
  }
  const t = ctx.address.tenant;
  s.waiting.forEach((e, i) => {
    if (i >= from)
      ctx.emit(rooms.user(t, e.userId), 'waitingRoom', {
        eventId: s.eventId,
        state: 'waiting',
        position: i + 1,
        since: e.since,
      });
  });
  const hosts = hostRooms(ctx);
  if (hosts.length) ctx.emit(hosts, 'waitingRoomUpdated', { eventId: s.eventId, waiting: waitingViews(s) });
  armConsentTimer(ctx);
  return held.map((e) => e.userId);
}

/** A held joiner left (disconnect) or their hold expired: out of the list, told `expired` on expiry. */
export function releaseHold(ctx: Ctx, userId: string, why: 'expired' | 'left'): boolean {
  const c = ctx.state.consent;
  const hold = c?.holds.find((h) => h.userId === userId);
  if (!c || !hold) return false;
  c.holds = c.holds.filter((h) => h !== hold);
  publish(ctx, 'recordingConsentHoldEnded', userId, { userId, outcome: why });
  if (why === 'expired')
    ctx.emit(rooms.user(ctx.address.tenant, userId), 'waitingRoom', { eventId: ctx.state.eventId, state: 'expired' });
  armConsentTimer(ctx);
  return true;
}

/** The recording stopped: agreement was to that recording, so the next one asks again. */
export function recordingStopped(s: MeetingState): void {
  if (s.consent) s.consent.granted = {};
}

/**
 * The meeting ended for everyone (decision 900): an open consent request is closed as not reached
 * (`timedOut`, told to the requester and hosts as usual) so no late answer can start a recording, held
 * joiners are told `ended`, and the agreement given is void.
 */
export function endConsent(ctx: Ctx): void {
  const c = ctx.state.consent;
  if (!c) return;
  if (c.request && !c.request.outcome) conclude(ctx, c.request, 'timedOut');
  for (const h of c.holds)
    ctx.emit(rooms.user(ctx.address.tenant, h.userId), 'waitingRoom', { eventId: ctx.state.eventId, state: 'ended' });
  c.holds = [];
  c.granted = {};
  ctx.clearTimer(CONSENT_TIMER);
}
