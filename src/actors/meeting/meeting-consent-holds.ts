// Joiners held out of a meeting whose recording runs under a consent policy until they agree (decision 910).
import { randomUUID } from 'node:crypto';
import { rooms } from '../../realtime/rooms.js';
import type { Caller } from '../../kernel/caller.js';
import { hostRooms, publish, requireHost, waitingViews, type Ctx, type MeetingActorDeps } from './meeting-state.js';
import type { ConsentRequestState, ConsentState, DeviceJoin, MeetingMsg } from './meeting.schema.js';
import {
  consentOf,
  asks,
  lateAsk,
  toUser,
  armConsentTimer,
  answerOf,
  type ConsentAnswerResult,
  type Policy,
} from './meeting-consent-state.js';

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

export async function answerHold(
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
