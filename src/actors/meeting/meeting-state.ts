import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import type { MeetingEnd } from '../../core/meetings/event-status.js';
import type { EventCompleted, EventCompletion } from '../../core/meetings/completion.service.js';
import type { ActorContext } from '../runtime/types.js';
import type { Caller } from '../../kernel/caller.js';
import type {
  ConsentSettings,
  MeetingData,
  MeetingDetails,
  MeetingEventPush,
  MeetingEventType,
  MeetingMember,
  RecordingConsentAnswer,
  WaitingEntryView,
} from '../../contracts/meeting.schema.js';
import type { DeviceJoin, MeetingState, WaitingEntry } from './meeting.schema.js';

/** What the meeting actor needs from the meeting and recording services (wired in src/actors/actor-deps.ts). */
export interface MeetingActorDeps {
  /** Assigns the room through the VCS port (event scheduled -> started) and returns MeetingData for the host. */
  initEvent(tenant: string, caller: Caller, eventId: string): Promise<MeetingData>;
  /**
   * Join details for a participant (by event id) or for whoever holds the meeting code (JoinResponse);
   * refuses people who are not participants when there is no code. `seen`: the event as the admission of
   * the same turn read it (read again without it). `held`: the meeting holds the caller as a member.
   */
  joinEvent(
    tenant: string,
    caller: Caller,
    eventId: string,
    code?: string,
    seen?: Admission['event'],
    held?: boolean,
  ): Promise<MeetingData>;
  /** The joiner's role and the waiting room policy of the event (decision 870). */
  admission(tenant: string, caller: Caller, eventId: string, code?: string): Promise<Admission>;
  /** Whether the user is a participant (or organizer) of the event. */
  isParticipant(tenant: string, eventId: string, userId: string): Promise<boolean>;
  /** Whether the user is a host of the event (organizer or host participant), joined or not. */
  isHost(tenant: string, eventId: string, userId: string): Promise<boolean>;
  /**
   * Starts the recording attributed to `userId`; `opts.consented` names the consent request every required
   * person agreed to (decision 910), `actorId`/`via`/`ip` who asked at the keyboard and how (audit trail).
   */
  startRecording(tenant: string, eventId: string, userId: string, opts?: RecordingOpts): Promise<void>;
  /** The tenant's recording consent policy and timeout (decision 910). */
  consentSettings(tenant: string): Promise<ConsentSettings>;
  /** Stores one consent answer with the event and writes it to the audit trail (idempotent per request and person). */
  recordConsent(tenant: string, eventId: string, answer: RecordingConsentAnswer): Promise<void>;
  stopRecording(tenant: string, eventId: string, userId: string, opts?: RecordingOpts): Promise<void>;
  /**
   * Whether the recording service has a recording of the event starting or running: stopRecording and
   * endMeeting stop such a recording even when this actor did not start it (one begun before every
   * entrance went through the actor).
   */
  recordingRunning(tenant: string, eventId: string): Promise<boolean>;
  /** addDeviceToEvent: the headset attaches itself to the event (it proved the join code) once it is a member. */
  attachDevice(tenant: string, caller: Caller, eventId: string, code: string): Promise<void>;
  /**
   * endMeeting (decision 900): the event goes started -> ended and its VCS room is closed through the
   * VCS port; idempotent (an ended event and a closed room stay so). The same write keeps the meeting's
   * last seq with the end (`last`, decision 1104).
   */
  endEvent(tenant: string, eventId: string, last: { seq: number }): Promise<void>;
  /**
   * How the event's meeting ended (ended, completed, cancelled) with the last seq kept with it, or null
   * while it is not over: read once per activation without a snapshot, to rebuild an ended meeting whose
   * snapshot expired (decision 1104).
   */
  meetingEnd(tenant: string, eventId: string): Promise<MeetingEnd | null>;
  /** Keeps the meeting's last seq with its ended event, never lowering it (the completion's, decision 1104). */
  keepLastSeq(tenant: string, eventId: string, seq: number): Promise<void>;
  /**
   * removeParticipant (decision 961): the member leaves the event's VCS room through the VCS port and
   * the join tokens issued to them before are refused; a later admission's token works. Idempotent.
   */
  removeFromRoom(tenant: string, eventId: string, member: { userId: string; device: boolean }): Promise<void>;
  /**
   * Who asked for the recording of the event that is starting or running (its recording is theirs), or
   * null when none is: the conference's completion stops it in their name.
   */
  recordingOwner(tenant: string, eventId: string): Promise<string | null>;
  /**
   * The conference's completion (decision 1090): the event goes to `completed` with its flags, keeping an
   * end endMeeting recorded; idempotent (`changed: false` once completed, the flags still raised).
   */
  completeEvent(tenant: string, eventId: string, completion: EventCompletion): Promise<EventCompleted>;
  /** Whether the audit trail holds the event's `telemetry.complete` entry. */
  completionAudited(tenant: string, eventId: string): Promise<boolean>;
  /** One entry of the tenant's audit trail (host controls, admissions): who, what, when. */
  audit(tenant: string, entry: MeetingAuditEntry): Promise<void>;
}

/** Who asked for a recording change at the keyboard and how, for the recording service's audit entry. */
export interface RecordingOpts {
  consented?: { requestId: string };
  actorId?: string;
  /**
   * `service`: a stop that is part of another change (endMeeting), whatever transport asked for that;
   * `telemetry`: the conference's completion stopped it, no person did (the audit entry names no actor).
   */
  via?: 'hub' | 'rest' | 'service' | 'telemetry';
  ip?: string;
}

/** What the meeting actor writes to the audit trail. */
export interface MeetingAuditEntry {
  action: string;
  outcome: 'success' | 'failure';
  /** Absent when no person acted (the conference's completion). */
  actorId?: string;
  eventId: string;
  subjectId?: string;
  details?: Record<string, unknown>;
}

export type Ctx = ActorContext<MeetingState>;

/** Snapshots written before the waiting room lack its fields. */
export function normalize(s: MeetingState): MeetingState {
  s.waiting ??= [];
  s.barred ??= {};
  s.roleGrants ??= {};
  s.hostRequests ??= {};
  return s;
}

/** Every meeting change is one numbered meetingEvent to the meeting room, in turn order. */
export function publish(
  ctx: Ctx,
  type: MeetingEventType,
  by?: string,
  data?: Record<string, unknown>,
): MeetingEventPush {
  ctx.state.seq += 1;
  const push: MeetingEventPush = {
    eventId: ctx.state.eventId,
    seq: ctx.state.seq,
    type,
    at: new Date().toISOString(),
    ...(by ? { by } : {}),
    ...(data ? { data } : {}),
  };
  ctx.emit(rooms.meeting(ctx.address.tenant, ctx.state.eventId), 'meetingEvent', push);
  return push;
}

export function waitingViews(s: MeetingState): WaitingEntryView[] {
  return (s.waiting ?? []).map((e: WaitingEntry, i) => ({
    userId: e.userId,
    name: e.username,
    kind: e.kind,
    role: e.role,
    invited: e.invited,
    since: e.since,
    position: i + 1,
    ...(e.returning ? { returning: e.returning } : {}),
  }));
}

/** The meeting as a member sees it; hosts also see the waiting queue. */
export function details(s: MeetingState, forHost = false): MeetingDetails {
  return {
    eventId: s.eventId,
    started: s.started,
    room: s.room,
    members: Object.values(s.members),
    deviceIds: [...s.deviceIds],
    recording: { ...s.recording },
    sharedImage: s.sharedImage,
    seq: s.seq,
    ...(forHost ? { waiting: waitingViews(s) } : {}),
    ...(s.locked ? { locked: true } : {}),
    ...(s.ended ? { ended: true } : {}),
  };
}

export function isHostMember(s: MeetingState, userId: string): boolean {
  return s.members[userId]?.role === 'host';
}

/**
 * Whether the caller sees the meeting as a host (its waiting room in the details). A member's role here
 * is the meeting's word, read from nothing: the event's role when they joined (an event is editable only
 * while scheduled, and nobody joins before it starts) with the host roles given or taken in this meeting.
 * Someone who has not joined is a host by a role given here, else by the event's, unless they handed the
 * role over here, as requireHost decides.
 */
export async function seesAsHost(ctx: Ctx, deps: MeetingActorDeps, caller: Caller): Promise<boolean> {
  const s = ctx.state;
  if (s.members[caller.userId]) return isHostMember(s, caller.userId);
  const grant = s.roleGrants?.[caller.userId]?.role;
  if (grant) return grant === 'host';
  return deps.isHost(ctx.address.tenant, ctx.address.id, caller.userId);
}

/**
 * Hosts in the meeting, or hosts of the event who have not joined (REST, GraphQL). Members and
 * participants who are not hosts are told so; anyone else learns nothing of the meeting.
 */
export async function requireHost(ctx: Ctx, deps: MeetingActorDeps, caller: Caller): Promise<void> {
  const { tenant, id } = ctx.address;
  if (isHostMember(ctx.state, caller.userId)) return;
  const grant = ctx.state.roleGrants?.[caller.userId]?.role;
  if (grant === 'host') return;
  // A host who handed the meeting over (transferHost) is no longer one here, whatever the event says.
  if (grant !== 'participant' && (await deps.isHost(tenant, id, caller.userId))) return;
  if (ctx.state.members[caller.userId] || (await deps.isParticipant(tenant, id, caller.userId)))
    throw new AppError('not_meeting_host', 'Only a host of this meeting may do this');
  throw new AppError('meeting_not_found', 'No such meeting');
}

/** The member's role in this meeting (host, participant, guest, device), from the meeting service's join details. */
export function meetingRole(data: MeetingData): MeetingMember['role'] {
  return data.role === 'host' || data.role === 'guest' || data.role === 'device' ? data.role : 'participant';
}

/**
 * Adds (or refreshes) a member. A host role given or taken in this meeting (transferHost, addHost,
 * host access) outlasts a rejoin: it overrides the role the event's join details carry.
 */
export function addMember(ctx: Ctx, caller: Caller, role: MeetingMember['role'], device?: DeviceJoin): boolean {
  // Someone is in: the meeting runs (a join by code starts the event without initEvent).
  ctx.state.started = true;
  const granted = ctx.state.roleGrants?.[caller.userId]?.role;
  const effective = granted && (role === 'host' || role === 'participant') ? granted : role;
  const canHost = caller.permissions.includes('meetings:host');
  const existing = ctx.state.members[caller.userId];
  if (existing) {
    existing.role = effective;
    existing.canHost = canHost;
    if (device) existing.deviceId = device.deviceId;
    return false;
  }
  ctx.state.members[caller.userId] = {
    userId: caller.userId,
    username: caller.username,
    role: effective,
    joinedAt: new Date().toISOString(),
    canHost,
    tenantRole: caller.role,
    ...(device ? { deviceId: device.deviceId } : {}),
  };
  return true;
}

/**
 * A headset became a member (a direct join, a host's admission, its consent): its device is listed in
 * the meeting (deviceAdded), attached to the event when it asked so (addDeviceToEvent), told which
 * meeting it is in (device actor), and its sockets join the meeting's headset room. Nothing of this
 * happens while it waits: a device is held, admitted, denied, removed and barred like a person.
 */
export async function deviceEntered(
  ctx: Ctx,
  deps: MeetingActorDeps,
  caller: Caller,
  device: DeviceJoin | undefined,
  code?: string,
): Promise<void> {
  if (!device) return;
  const s = ctx.state;
  const t = ctx.address.tenant;
  if (device.attach && code) await deps.attachDevice(t, caller, s.eventId, code);
  await ctx.ask(
    { tenant: t, kind: 'device', id: device.deviceId },
    { type: 'assignMeeting', caller, eventId: s.eventId },
  );
  const join = [rooms.meeting(t, s.eventId), rooms.meetingDevices(t, s.eventId)];
  // By its device room only: the headset's pushes are recorded on its device stream, once (decision 1000).
  ctx.moveSockets(rooms.device(t, device.deviceId), { join });
  if (!s.deviceIds.includes(device.deviceId)) {
    s.deviceIds.push(device.deviceId);
    publish(ctx, 'deviceAdded', caller.userId, { deviceId: device.deviceId, userId: caller.userId });
  }
}

/**
 * A headset member left the meeting (removed, the meeting ended or completed; `caller`: who did it, none
 * for the conference's completion): out of deviceIds, and its device
 * actor no longer counts it in this meeting (its peripherals answer to no one here).
 */
export async function deviceLeft(ctx: Ctx, m: MeetingMember | undefined, caller?: Caller): Promise<void> {
  if (!m?.deviceId) return;
  const s = ctx.state;
  s.deviceIds = s.deviceIds.filter((d) => d !== m.deviceId);
  await ctx.ask(
    { tenant: ctx.address.tenant, kind: 'device', id: m.deviceId },
    { type: 'leaveMeeting', eventId: s.eventId, ...(caller ? { caller } : {}) },
  );
}

/** The user rooms of the hosts in the meeting (waitingRoomUpdated goes there). */
export function hostRooms(ctx: Ctx): string[] {
  return Object.values(ctx.state.members)
    .filter((m) => m.role === 'host')
    .map((m) => rooms.user(ctx.address.tenant, m.userId));
}
