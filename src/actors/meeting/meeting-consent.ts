import { randomUUID } from 'node:crypto';
import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import { details, publish, type Ctx, type MeetingActorDeps, type RecordingOpts } from './meeting-state.js';
import { type ConsentSettings, type MeetingDetails } from '../../contracts/meeting.schema.js';
import type { ConsentRequestState, ConsentState, MeetingMsg, MeetingState } from './meeting.schema.js';
import {
  CONSENT_TIMER,
  consentOf,
  asks,
  askOf,
  answerOf,
  toUser,
  withConsent,
  armConsentTimer,
  needed,
  conclude,
  consentView,
  type ConsentAnswerResult,
  type Policy,
} from './meeting-consent-state.js';
import { answerHold, releaseHold } from './meeting-consent-holds.js';

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

/** Timer turn: an open request past its time is cancelled (the hosts learn who did not answer); expired holds are let go. */
export function consentTimeout(ctx: Ctx): void {
  const c = consentOf(ctx.state);
  const now = Date.now();
  const r = c.request;
  if (r && !r.outcome && r.expiresAt <= now) conclude(ctx, r, 'timedOut');
  for (const h of c.holds.filter((x) => x.expiresAt <= now)) releaseHold(ctx, h.userId, 'expired');
  armConsentTimer(ctx);
}

/** The recording stopped: agreement was to that recording, so the next one asks again. */
export function recordingStopped(s: MeetingState): void {
  if (s.consent) s.consent.granted = {};
}

/**
 * Stops whatever records, by `userId`'s request: the recording service is asked only while it records
 * (or starts to), and the meeting's view follows the service. So a stop whose earlier attempt stopped the
 * recording and was lost with its turn (the node gone before the turn's save, the state still showing the
 * recording) ends in the same place instead of the service's `invalid_state` (fleet day run 35). True
 * when the meeting showed a recording or one ran: the members are then told `recordingStopped`.
 */
export async function stopWhatRecords(
  ctx: Ctx,
  deps: MeetingActorDeps,
  userId: string,
  opts: RecordingOpts,
): Promise<boolean> {
  const s = ctx.state;
  const running = await deps.recordingRunning(ctx.address.tenant, s.eventId);
  if (!running && !s.recording.active) return false;
  if (running) await deps.stopRecording(ctx.address.tenant, s.eventId, userId, opts);
  s.recording = { ...s.recording, active: false, stoppedAt: new Date().toISOString() };
  recordingStopped(s);
  publish(ctx, 'recordingStopped', userId);
  return true;
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
