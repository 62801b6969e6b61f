import { AppError } from '../../kernel/errors.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import { rooms } from '../../realtime/rooms.js';
import type { Caller } from '../../kernel/caller.js';
import { deviceLeft, publish, requireHost, type Ctx, type MeetingActorDeps } from './meeting-state.js';
import { WAITING_EXPIRY_TIMER } from './meeting-waiting.js';
import { endConsent, stopWhatRecords } from './meeting-consent.js';
import type { ControlResult } from '../../contracts/meeting-controls.schema.js';
import type { MeetingMember } from '../../contracts/meeting.schema.js';
import type { MeetingControlMsg, MeetingControlName } from './meeting-controls.schema.js';

type Msg<T extends MeetingControlName> = Extract<MeetingControlMsg, { type: T }>;

/** Audit action of each control (docs/audit.md). */
const ACTIONS: Record<MeetingControlName, string> = {
  removeParticipant: 'meeting.remove_participant',
  endMeeting: 'meeting.end',
  lockMeeting: 'meeting.lock',
  unlockMeeting: 'meeting.unlock',
  transferHost: 'meeting.transfer_host',
  addHost: 'meeting.add_host',
  muteRequest: 'meeting.mute_request',
  answerHostAccess: 'meeting.host_access_answer',
};

/** An ended meeting takes no more joins or controls (endMeeting itself answers again with its result). */
export function assertOpen(ctx: Ctx): void {
  if (ctx.state.ended) throw new AppError('invalid_state', 'The meeting has ended');
}

/**
 * Whether a locked meeting holds this new joiner (decision 900): hosts always come in; everyone else
 * waits when the meeting has a waiting room and is refused with meeting_locked when it has none.
 */
export function lockedOut(ctx: Ctx, a: Admission): boolean {
  if (!ctx.state.locked || a.role === 'host') return false;
  if (!a.waitingRoom) throw new AppError('meeting_locked', 'The meeting is locked: a host must unlock it');
  return true;
}

function result(ctx: Ctx, affected: string[]): ControlResult {
  const s = ctx.state;
  const members = Object.values(s.members);
  return {
    eventId: s.eventId,
    seq: s.seq,
    locked: !!s.locked,
    ended: !!s.ended,
    hosts: members.filter((m) => m.role === 'host').map((m) => m.userId),
    members: members.map((m) => m.userId),
    affected,
  };
}

function audit(ctx: Ctx, deps: MeetingActorDeps, msg: MeetingControlMsg, details: Record<string, unknown>) {
  const subject = 'userId' in msg ? { subjectId: msg.userId } : {};
  return deps.audit(ctx.address.tenant, {
    action: ACTIONS[msg.type],
    outcome: 'success',
    ...by(msg.caller, details),
    eventId: ctx.state.eventId,
    ...subject,
  });
}

/**
 * Who an audit entry names as actor: the person at the keyboard, the impersonator while impersonating
 * (with the impersonated host as `details.onBehalfOf`), as every other entry of the trail does.
 */
export function by(caller: Caller, details: Record<string, unknown>) {
  return {
    actorId: caller.actorUserId ?? caller.userId,
    details: { ...details, ...(caller.actorUserId ? { onBehalfOf: caller.userId } : {}) },
  };
}

/** The member a control acts on: someone in the meeting now. */
function member(ctx: Ctx, userId: string) {
  const m = ctx.state.members[userId];
  if (!m) throw new AppError('participant_not_found', `${userId} is not in the meeting`);
  return m;
}

/**
 * Takes a member out: out of the VCS room (their earlier join tokens refused), barred (they come back
 * only through a host's admission, whose join details carry a fresh token), their sockets out of the rooms.
 */
async function remove(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'removeParticipant'>): Promise<ControlResult> {
  const s = ctx.state;
  if (msg.userId === msg.caller.userId)
    throw new AppError('bad_request', 'A host leaves the meeting, not removes itself');
  if (!s.members[msg.userId] && s.barred![msg.userId]?.reason === 'removed') return result(ctx, []);
  const m = member(ctx, msg.userId);
  const t = ctx.address.tenant;
  // Out of the media room first, fenced like the bar itself (decision 961): a node that lost its lease
  // removes no one, and a VCS that cannot be reached fails the turn (nothing changes; the host retries).
  const who = { userId: msg.userId, device: m.role === 'device' || s.deviceIds.includes(msg.userId) };
  await ctx.fencedWrite(async () => {
    await deps.removeFromRoom(t, s.eventId, who);
    return true;
  });
  const at = new Date().toISOString();
  await deviceLeft(ctx, m, msg.caller);
  delete s.members[msg.userId];
  delete s.roleGrants![msg.userId];
  delete s.hostRequests![msg.userId];
  s.deviceIds = s.deviceIds.filter((d) => d !== msg.userId);
  s.barred![msg.userId] = { reason: 'removed', by: msg.caller.userId, at };
  const reason = msg.reason ? { reason: msg.reason } : {};
  publish(ctx, 'participantRemoved', msg.caller.userId, { userId: msg.userId, ...reason });
  const user = rooms.user(t, msg.userId);
  ctx.emit(user, 'removedFromMeeting', {
    eventId: s.eventId,
    code: 'meeting_access_denied',
    by: msg.caller.userId,
    at,
    ...reason,
  });
  // A headset member's sockets (and its stream on the meeting's rosters) are its device room's too.
  const out = m.deviceId ? [user, rooms.device(t, m.deviceId)] : user;
  ctx.moveSockets(out, { leave: [rooms.meeting(t, s.eventId), rooms.meetingDevices(t, s.eventId)] });
  await audit(ctx, deps, msg, reason);
  return result(ctx, [msg.userId]);
}

/**
 * Ends the meeting for everyone: a running recording stops, the event goes to `ended` with the meeting's
 * last seq and the VCS room closes (a fenced write of this turn), every socket leaves the meeting's rooms,
 * waiting entries are told `ended`. The turn retires the snapshot (decision 1104): past the retention the
 * actor rebuilds the ended meeting from the event. Ending an ended meeting answers the same state, changes
 * nothing and retires it again.
 */
async function end(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'endMeeting'>): Promise<ControlResult> {
  const s = ctx.state;
  if (s.ended) {
    ctx.retire();
    return result(ctx, []);
  }
  const t = ctx.address.tenant;
  // Whatever runs stops, also a recording this actor did not start (asked for before every entrance came here).
  await stopWhatRecords(ctx, deps, msg.caller.userId, {
    actorId: msg.caller.actorUserId ?? msg.caller.userId,
    via: 'service',
  });
  const reason = msg.reason ? { reason: msg.reason } : {};
  s.ended = { by: msg.caller.userId, at: new Date().toISOString(), ...reason };
  const out = closeMeeting(ctx, () => publish(ctx, 'meetingEnded', msg.caller.userId, reason));
  await ctx.fencedWrite(async () => {
    await deps.endEvent(t, s.eventId, { seq: s.seq });
    return true;
  });
  await headsetsOut(ctx, out.leaving, msg.caller);
  await audit(ctx, deps, msg, { members: out.members, waiting: out.waiting, ...reason });
  ctx.retire();
  return result(ctx, out.members);
}

/**
 * The meeting is over for everyone (endMeeting, the conference's completion): the waiting and the joiners
 * held for recording consent are told `ended`, an open consent request closes, `last` publishes the
 * meeting's last event while the members are still in its rooms, then every socket leaves its rooms and
 * no one is a member any more. Only the state and the turn's pushes change, so the meeting's last seq is
 * known to the fenced write that follows; the headsets that were members are told after it (headsetsOut).
 * Answers who was in, who waited, and the members who leave.
 */
export function closeMeeting(
  ctx: Ctx,
  last: () => void,
): { members: string[]; waiting: string[]; leaving: MeetingMember[] } {
  const s = ctx.state;
  const t = ctx.address.tenant;
  const members = Object.keys(s.members);
  for (const e of s.waiting!) ctx.emit(rooms.user(t, e.userId), 'waitingRoom', { eventId: s.eventId, state: 'ended' });
  const waiting = s.waiting!.map((e) => e.userId);
  s.waiting = [];
  ctx.clearTimer(WAITING_EXPIRY_TIMER);
  s.hostRequests = {};
  endConsent(ctx);
  last();
  const meeting = rooms.meeting(t, s.eventId);
  ctx.moveSockets(meeting, { leave: [meeting, rooms.meetingDevices(t, s.eventId)] });
  const leaving = Object.values(s.members);
  s.members = {};
  s.deviceIds = [];
  return { members, waiting, leaving };
}

/** The headsets among the members a closed meeting let go leave it (`caller`: who ended it; none for the completion). */
export async function headsetsOut(ctx: Ctx, leaving: MeetingMember[], caller?: Caller): Promise<void> {
  for (const m of leaving) await deviceLeft(ctx, m, caller);
}

async function lock(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'lockMeeting' | 'unlockMeeting'>) {
  const s = ctx.state;
  const locking = msg.type === 'lockMeeting';
  if (!!s.locked === locking) return result(ctx, []);
  if (locking) s.locked = { by: msg.caller.userId, at: new Date().toISOString() };
  else delete s.locked;
  publish(ctx, locking ? 'meetingLocked' : 'meetingUnlocked', msg.caller.userId);
  await audit(ctx, deps, msg, {});
  return result(ctx, [s.eventId]);
}

/** Makes a member a host of this meeting (kept across rejoins); refuses members who may not host. */
function makeHost(ctx: Ctx, caller: Caller, userId: string): void {
  const m = member(ctx, userId);
  if (m.role !== 'host' && !m.canHost)
    throw new AppError('host_not_eligible', `${userId} may not host meetings (no meetings:host permission)`);
  m.role = 'host';
  ctx.state.roleGrants![userId] = { role: 'host', by: caller.userId, at: new Date().toISOString() };
}

async function hostChange(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'transferHost' | 'addHost'>) {
  const s = ctx.state;
  const before = s.members[msg.userId]?.role;
  if (msg.userId === msg.caller.userId || (msg.type === 'addHost' && before === 'host')) {
    member(ctx, msg.userId);
    return result(ctx, []);
  }
  makeHost(ctx, msg.caller, msg.userId);
  if (msg.type === 'transferHost') {
    s.roleGrants![msg.caller.userId] = { role: 'participant', by: msg.caller.userId, at: new Date().toISOString() };
    const me = s.members[msg.caller.userId];
    if (me) me.role = 'participant';
    publish(ctx, 'hostTransferred', msg.caller.userId, { from: msg.caller.userId, to: msg.userId });
  } else publish(ctx, 'hostAdded', msg.caller.userId, { userId: msg.userId });
  await audit(ctx, deps, msg, { previousRole: before });
  return result(ctx, [msg.userId]);
}

async function mute(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'muteRequest'>): Promise<ControlResult> {
  member(ctx, msg.userId);
  const at = new Date().toISOString();
  const message = msg.message ? { message: msg.message } : {};
  ctx.emit(rooms.user(ctx.address.tenant, msg.userId), 'muteRequested', {
    eventId: ctx.state.eventId,
    by: msg.caller.userId,
    media: msg.media,
    at,
    ...message,
  });
  publish(ctx, 'muteRequested', msg.caller.userId, { userId: msg.userId, media: msg.media });
  await audit(ctx, deps, msg, { media: msg.media, ...message });
  return result(ctx, [msg.userId]);
}

/** requestHostAccess (SPEC): the member's request is kept until a host answers it. */
export function requestHostAccess(ctx: Ctx, caller: Caller) {
  if (!ctx.state.members[caller.userId]) throw new AppError('forbidden', 'Join the meeting first');
  assertOpen(ctx);
  ctx.state.hostRequests![caller.userId] ??= { since: new Date().toISOString() };
  return publish(ctx, 'hostAccessRequested', caller.userId, { userId: caller.userId, username: caller.username });
}

/** A host's answer to requestHostAccess: granted makes the requester a host; either way the requester is told. */
async function answer(ctx: Ctx, deps: MeetingActorDeps, msg: Msg<'answerHostAccess'>): Promise<ControlResult> {
  const s = ctx.state;
  if (!s.hostRequests![msg.userId])
    throw new AppError('host_request_not_found', `${msg.userId} has no pending request for host access`);
  if (msg.grant) makeHost(ctx, msg.caller, msg.userId);
  delete s.hostRequests![msg.userId];
  const state = msg.grant ? 'granted' : 'refused';
  const message = msg.message ? { message: msg.message } : {};
  ctx.emit(rooms.user(ctx.address.tenant, msg.userId), 'hostAccess', {
    eventId: s.eventId,
    state,
    by: msg.caller.userId,
    at: new Date().toISOString(),
    ...message,
  });
  publish(ctx, msg.grant ? 'hostAccessGranted' : 'hostAccessRefused', msg.caller.userId, { userId: msg.userId });
  await audit(ctx, deps, msg, { answer: state, ...message });
  return result(ctx, [msg.userId]);
}

/**
 * One host control as a turn of the meeting actor (decision 900): hosts only, refused once the meeting
 * ended (except endMeeting, which answers again), audited with who, what and when.
 */
export async function control(ctx: Ctx, deps: MeetingActorDeps, msg: MeetingControlMsg): Promise<ControlResult> {
  await requireHost(ctx, deps, msg.caller);
  if (msg.type !== 'endMeeting') assertOpen(ctx);
  switch (msg.type) {
    case 'removeParticipant':
      return remove(ctx, deps, msg);
    case 'endMeeting':
      return end(ctx, deps, msg);
    case 'lockMeeting':
    case 'unlockMeeting':
      return lock(ctx, deps, msg);
    case 'transferHost':
    case 'addHost':
      return hostChange(ctx, deps, msg);
    case 'muteRequest':
      return mute(ctx, deps, msg);
    case 'answerHostAccess':
      return answer(ctx, deps, msg);
  }
}

/** Whether a meeting message is a host control of this module. */
export function isControl(msg: { type: string }): msg is MeetingControlMsg {
  return Object.hasOwn(ACTIONS, msg.type);
}
