import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import type { ActorBehavior } from '../runtime/types.js';
import type { Caller } from '../../kernel/caller.js';
import type { ConsentHold, MeetingMsg, MeetingState, RecordingVia } from './meeting.schema.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import type {
  ConsentRequiredAck,
  MeetingData,
  MeetingDetails,
  MeetingEventPush,
  WaitingAck,
} from '../../contracts/meeting.schema.js';
import {
  addMember,
  deviceEntered,
  details,
  isHostMember,
  seesAsHost,
  meetingRole,
  normalize,
  publish,
  waitingViews,
  type Ctx,
  type MeetingActorDeps,
  type RecordingOpts,
} from './meeting-state.js';
import { admit, deny, enqueue, expire, leave, mustWait, waitingRoom } from './meeting-waiting.js';
import { assertOpen, control, isControl, lockedOut, requestHostAccess } from './meeting-controls.js';
import { complete } from './meeting-completion.js';
import { answerConsent, askNewcomers, consentTimeout, requestConsent, stopWhatRecords } from './meeting-consent.js';
import { withConsent } from './meeting-consent-state.js';
import { holdAdmissions, holdForConsent, releaseHold } from './meeting-consent-holds.js';
import { recoverMeeting } from './meeting-recovery.js';

export type { MeetingActorDeps } from './meeting-state.js';

function requireMember(s: MeetingState, caller: Caller): void {
  if (!s.members[caller.userId]) throw new AppError('forbidden', 'Join the meeting first');
}

async function init(
  ctx: Ctx,
  deps: MeetingActorDeps,
  caller: Caller,
): Promise<MeetingData & { meeting: MeetingDetails }> {
  assertOpen(ctx);
  const data = await deps.initEvent(ctx.address.tenant, caller, ctx.address.id);
  const first = !ctx.state.started;
  ctx.state.started = true;
  if (data.room) ctx.state.room = data.room;
  const joined = addMember(ctx, caller, meetingRole(data));
  if (first) publish(ctx, 'meetingStarted', caller.userId, { room: ctx.state.room });
  if (joined) publish(ctx, 'participantJoined', caller.userId, { userId: caller.userId, username: caller.username });
  return { ...data, meeting: details(ctx.state, true) };
}

/**
 * joinEvent, join by code, and a headset's initRapidConnect / addDeviceToEvent: a member (or someone
 * who needs no admission) gets the join details; a patient, guest or headset of a meeting with a
 * waiting room waits instead (decision 870), as does anyone barred or held by a lock.
 */
async function join(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'join' }>,
): Promise<(MeetingData & { meeting: MeetingDetails }) | WaitingAck | ConsentRequiredAck> {
  const s = ctx.state;
  const { caller, code, device } = msg;
  assertOpen(ctx);
  let seen: Admission['event'];
  const held = !!s.members[caller.userId];
  if (!held) {
    const a = await deps.admission(ctx.address.tenant, caller, ctx.address.id, code);
    seen = a.event;
    const thenWait = mustWait(ctx, caller, a) || lockedOut(ctx, a);
    const held = await holdForConsent(ctx, deps, caller, {
      role: a.role,
      invited: a.invited,
      thenWait,
      waitExpirySeconds: a.expirySeconds,
      ...(code ? { code } : {}),
      ...(device ? { device } : {}),
    });
    if (held) return held;
    if (thenWait) return enqueue(ctx, caller, a, code, device);
  }
  const data = await deps.joinEvent(ctx.address.tenant, caller, ctx.address.id, code, seen, held);
  if (data.room) s.room = data.room;
  if (addMember(ctx, caller, meetingRole(data), device))
    publish(ctx, 'participantJoined', caller.userId, { userId: caller.userId, username: caller.username });
  await deviceEntered(ctx, deps, caller, device, code);
  return { ...data, meeting: details(s, isHostMember(s, caller.userId)) };
}

async function getDetails(ctx: Ctx, deps: MeetingActorDeps, caller: Caller): Promise<MeetingDetails> {
  if (
    !ctx.state.members[caller.userId] &&
    !(await deps.isParticipant(ctx.address.tenant, ctx.address.id, caller.userId))
  ) {
    throw new AppError('meeting_not_found', 'No such meeting');
  }
  return withConsent(ctx.state, details(ctx.state, await seesAsHost(ctx, deps, caller)));
}

/**
 * A held joiner agreed to the running recording (decision 910): into the waiting room when it applies
 * to them, else into the meeting as a direct join would have, with the admission push and socket move.
 */
async function enterAfterConsent(ctx: Ctx, deps: MeetingActorDeps, h: ConsentHold): Promise<unknown> {
  const s = ctx.state;
  const t = ctx.address.tenant;
  if (h.thenWait) {
    const a = { eventId: s.eventId, role: h.role, invited: h.invited, waitingRoom: true, autoAdmitInvited: false };
    return enqueue(ctx, h.caller, { ...a, expirySeconds: h.waitExpirySeconds }, h.code, h.device);
  }
  const data = await deps.joinEvent(t, h.caller, s.eventId, h.code);
  if (data.room) s.room = data.room;
  if (addMember(ctx, h.caller, meetingRole(data), h.device))
    publish(ctx, 'participantJoined', h.userId, { userId: h.userId, username: h.username });
  // A headset's sockets enter by its device room (deviceEntered below), not also by its account's user room.
  if (!h.device)
    ctx.moveSockets(rooms.user(t, h.userId), {
      join: [rooms.meeting(t, s.eventId), ...(h.kind === 'device' ? [rooms.meetingDevices(t, s.eventId)] : [])],
    });
  await deviceEntered(ctx, deps, h.caller, h.device, h.code);
  const meeting = { ...data, meeting: details(s, isHostMember(s, h.userId)) };
  ctx.emit(rooms.user(t, h.userId), 'waitingRoom', { eventId: s.eventId, state: 'admitted', meeting });
  return meeting;
}

/**
 * Who may start or stop the recording: a member of the meeting, or a host of the event who has not
 * joined (REST). A participant who did not join is told to join first; anyone else learns nothing.
 */
async function requireRecorder(ctx: Ctx, deps: MeetingActorDeps, caller: Caller): Promise<void> {
  if (ctx.state.members[caller.userId]) return;
  const { tenant, id } = ctx.address;
  const grant = ctx.state.roleGrants?.[caller.userId]?.role;
  if (grant === 'host' || (grant !== 'participant' && (await deps.isHost(tenant, id, caller.userId)))) return;
  if (ctx.state.barred?.[caller.userId] || (await deps.isParticipant(tenant, id, caller.userId)))
    throw new AppError('forbidden', 'Join the meeting first');
  throw new AppError('meeting_not_found', 'No such meeting');
}

/** Who asked at the keyboard and how, for the recording service's audit entry. */
function recordingOpts(msg: { caller: Caller } & RecordingVia): RecordingOpts {
  return {
    actorId: msg.caller.actorUserId ?? msg.caller.userId,
    via: msg.via ?? 'hub',
    ...(msg.ip ? { ip: msg.ip } : {}),
  };
}

/**
 * startRecording / stopRecording, whatever the entrance (hub, REST): the one place a recording starts
 * or stops, so every member hears it, the meeting shows it, the consent policy is asked, and a stop
 * (or endMeeting) stops what runs.
 */
async function recording(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'startRecording' | 'stopRecording' }>,
): Promise<MeetingDetails> {
  const s = ctx.state;
  const { caller } = msg;
  assertOpen(ctx);
  await requireRecorder(ctx, deps, caller);
  if (!s.started) throw new AppError('invalid_state', 'The meeting has not started');
  const opts = recordingOpts(msg);
  if (msg.type === 'stopRecording') {
    await stopWhatRecords(ctx, deps, caller.userId, opts);
    return withConsent(s, details(s));
  }
  if (s.recording.active) return withConsent(s, details(s));
  const consent = await deps.consentSettings(ctx.address.tenant);
  if (consent.policy !== 'off') return requestConsent(ctx, deps, msg, consent, opts);
  await deps.startRecording(ctx.address.tenant, s.eventId, caller.userId, opts);
  s.recording = { active: true, startedAt: new Date().toISOString(), startedBy: caller.userId };
  publish(ctx, 'recordingStarted', caller.userId);
  return withConsent(s, details(s));
}

function shareImage(ctx: Ctx, msg: Extract<MeetingMsg, { type: 'shareImage' }>): MeetingDetails {
  requireMember(ctx.state, msg.caller);
  ctx.state.sharedImage = {
    image: msg.req.image,
    caption: msg.req.caption,
    by: msg.caller.userId,
    at: new Date().toISOString(),
  };
  ctx.emit(rooms.meetingDevices(ctx.address.tenant, ctx.state.eventId), 'onShareImage', {
    eventId: ctx.state.eventId,
    ...ctx.state.sharedImage,
  });
  publish(ctx, 'imageShared', msg.caller.userId, { image: msg.req.image });
  return details(ctx.state);
}

function clearImage(ctx: Ctx, caller: Caller): MeetingDetails {
  requireMember(ctx.state, caller);
  delete ctx.state.sharedImage;
  ctx.emit(rooms.meetingDevices(ctx.address.tenant, ctx.state.eventId), 'onClearImage', {
    eventId: ctx.state.eventId,
    by: caller.userId,
  });
  publish(ctx, 'imageCleared', caller.userId);
  return details(ctx.state);
}

function notify(ctx: Ctx, msg: Extract<MeetingMsg, { type: 'notify' }>): MeetingEventPush {
  requireMember(ctx.state, msg.caller);
  return publish(ctx, 'notify', msg.caller.userId, { action: msg.action, ...(msg.data ? { payload: msg.data } : {}) });
}

/**
 * A host's admission: while a consented recording runs, the admitted who have not agreed are held for
 * their consent first (decision 910); the others are admitted as usual.
 */
async function admitOrHold(ctx: Ctx, deps: MeetingActorDeps, msg: Extract<MeetingMsg, { type: 'admit' }>) {
  const held = await holdAdmissions(ctx, deps, msg);
  if (held.length && !msg.all)
    return { eventId: ctx.state.eventId, waiting: waitingViews(ctx.state), admitted: [], held };
  const r = asked(ctx)(await admit(ctx, deps, msg));
  return held.length ? { ...r, held } : r;
}

/** After a join or an admission: members who came in while a consent request is open are asked too. */
const asked =
  (ctx: Ctx) =>
  <T>(reply: T): T => {
    askNewcomers(ctx);
    return reply;
  };

/**
 * Messages that only read the meeting (decision 1120): their turns see the state frozen, so they must not
 * normalize it either; what they read of an older snapshot's missing fields they read with defaults.
 */
const READ_ONLY: ReadonlySet<MeetingMsg['type']> = new Set(['details', 'waitingRoom', 'isMember', 'members']);

function route(ctx: Ctx, deps: MeetingActorDeps, msg: MeetingMsg): unknown {
  if (!READ_ONLY.has(msg.type)) normalize(ctx.state);
  switch (msg.type) {
    case 'init':
      return init(ctx, deps, msg.caller);
    case 'join':
      return join(ctx, deps, msg).then(asked(ctx));
    case 'admit':
      return admitOrHold(ctx, deps, msg);
    case 'deny':
      return deny(ctx, deps, msg);
    case 'waitingRoom':
      return waitingRoom(ctx, deps, msg.caller);
    case 'leaveWaiting':
      return { left: releaseHold(ctx, msg.caller.userId, 'left') || leave(ctx, msg.caller).left };
    case 'expireWaiting':
      return expire(ctx);
    case 'details':
      return getDetails(ctx, deps, msg.caller);
    case 'notify':
      return notify(ctx, msg);
    case 'startRecording':
    case 'stopRecording':
      return recording(ctx, deps, msg);
    case 'consentToRecording':
      assertOpen(ctx);
      return answerConsent(ctx, deps, msg, (h) => enterAfterConsent(ctx, deps, h));
    case 'consentTimeout':
      return consentTimeout(ctx);
    case 'shareImage':
      return shareImage(ctx, msg);
    case 'clearImage':
      return clearImage(ctx, msg.caller);
    case 'requestHostAccess':
      return requestHostAccess(ctx, msg.caller);
    case 'isMember':
      return { member: Boolean(ctx.state.members[msg.userId]) };
    case 'members':
      return { memberIds: Object.keys(ctx.state.members), deviceIds: [...ctx.state.deviceIds] };
    case 'complete':
      return complete(ctx, deps, msg);
    default:
      if (isControl(msg)) return control(ctx, deps, msg);
      throw new AppError('bad_request', 'Unknown meeting message');
  }
}

/**
 * One actor per event: joins, recording, shared images, notifications, host controls and the
 * conference's completion of a meeting are turns of this actor, so every participant, on whatever node, receives the same numbered meetingEvents in
 * the same order.
 */
export function meetingActor(deps: MeetingActorDeps): ActorBehavior<MeetingState, MeetingMsg, unknown> {
  return {
    kind: 'meeting',
    initialState: (address) => ({
      eventId: address.id,
      started: false,
      members: {},
      deviceIds: [],
      recording: { active: false },
      seq: 0,
      waiting: [],
      barred: {},
      // What normalize() adds to older snapshots: a read-only turn of a fresh actor (isMember) changes nothing.
      roleGrants: {},
      hostRequests: {},
    }),
    // An ended meeting's snapshot expires (decision 1104): without one, the event says whether it is over.
    recover: (address, initial) => recoverMeeting(deps, address, initial),
    receive: (ctx, msg) => route(ctx, deps, msg),
    readOnly: (msg) => READ_ONLY.has(msg.type),
  };
}
