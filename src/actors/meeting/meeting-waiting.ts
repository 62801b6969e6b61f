import { AppError } from '../../kernel/errors.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import { rooms } from '../../realtime/rooms.js';
import type { Caller } from '../../kernel/caller.js';
import {
  addMember,
  deviceEntered,
  details,
  hostRooms,
  publish,
  requireHost,
  waitingViews,
  type Ctx,
  type MeetingActorDeps,
} from './meeting-state.js';
import type { DeviceJoin, MeetingMsg, WaitingEntry } from './meeting.schema.js';
import type { MeetingData, WaitingAck, WaitingRoomPush, WaitingRoomView } from '../../contracts/meeting.schema.js';

/** The timer that expires waiting entries (one per meeting, due at the earliest expiry). */
export const WAITING_EXPIRY_TIMER = 'waitingExpiry';

/**
 * Whether this joiner waits for a host (decision 870): barred users (denied, removed) always do;
 * otherwise patients, guests and headsets do when the meeting has a waiting room, unless the event
 * invited them and the tenant lets invited participants in.
 */
export function mustWait(ctx: Ctx, caller: Caller, a: Admission): boolean {
  if (a.role === 'host') return false;
  if (ctx.state.barred?.[caller.userId]) return true;
  if (!a.waitingRoom) return false;
  const waits = a.role === 'guest' || a.role === 'device' || caller.role === 'patient';
  return waits && !(a.autoAdmitInvited && a.invited);
}

function toClient(ctx: Ctx, userId: string, push: WaitingRoomPush): void {
  ctx.emit(rooms.user(ctx.address.tenant, userId), 'waitingRoom', push);
}

function view(ctx: Ctx): WaitingRoomView {
  return { eventId: ctx.state.eventId, waiting: waitingViews(ctx.state) };
}

/** Tells the hosts the queue changed and every entry at or after `from` its new position. */
function queueChanged(ctx: Ctx, from = 0): void {
  const q = ctx.state.waiting!;
  for (let i = from; i < q.length; i++)
    toClient(ctx, q[i]!.userId, { eventId: ctx.state.eventId, state: 'waiting', position: i + 1, since: q[i]!.since });
  const hosts = hostRooms(ctx);
  if (hosts.length) ctx.emit(hosts, 'waitingRoomUpdated', view(ctx));
  armExpiry(ctx);
}

function armExpiry(ctx: Ctx): void {
  const q = ctx.state.waiting!;
  if (!q.length) return ctx.clearTimer(WAITING_EXPIRY_TIMER);
  const due = Math.min(...q.map((e) => e.expiresAt));
  ctx.setTimer(WAITING_EXPIRY_TIMER, Math.max(0, due - Date.now()), { type: 'expireWaiting' });
}

/** Removes entries (by user id) from the queue; returns them and the first index that moved. */
function take(ctx: Ctx, userIds: Set<string>): { taken: WaitingEntry[]; from: number } {
  const q = ctx.state.waiting!;
  const from = q.findIndex((e) => userIds.has(e.userId));
  const taken = q.filter((e) => userIds.has(e.userId));
  ctx.state.waiting = q.filter((e) => !userIds.has(e.userId));
  return { taken, from: from < 0 ? q.length : from };
}

/** Puts the joiner in the queue (or keeps its place when it is already there) and acks `waiting`. */
export function enqueue(ctx: Ctx, caller: Caller, a: Admission, code?: string, device?: DeviceJoin): WaitingAck {
  const s = ctx.state;
  const q = s.waiting!;
  const known = q.find((e) => e.userId === caller.userId);
  if (known) {
    known.caller = caller;
    if (code) known.code = code;
    if (device) known.device = device;
    const position = q.indexOf(known) + 1;
    toClient(ctx, caller.userId, { eventId: s.eventId, state: 'waiting', position, since: known.since });
    return { status: 'waiting', eventId: s.eventId, position, since: known.since };
  }
  const barred = s.barred![caller.userId];
  const entry: WaitingEntry = {
    userId: caller.userId,
    username: caller.username,
    kind: a.role === 'device' || caller.role === 'device' ? 'device' : 'person',
    role: a.role === 'host' ? 'participant' : a.role,
    invited: a.invited,
    since: new Date().toISOString(),
    expiresAt: Date.now() + a.expirySeconds * 1000,
    ...(barred ? { returning: barred.reason } : {}),
    ...(code ? { code } : {}),
    ...(device ? { device } : {}),
    caller,
  };
  q.push(entry);
  publish(ctx, 'participantWaiting', caller.userId, { userId: caller.userId });
  queueChanged(ctx, q.length - 1);
  const position = q.length;
  return { status: 'waiting', eventId: s.eventId, position, since: entry.since };
}

function targets(ctx: Ctx, msg: { userId?: string; all?: boolean }): Set<string> {
  const q = ctx.state.waiting!;
  return new Set(msg.all ? q.map((e) => e.userId) : q.filter((e) => e.userId === msg.userId).map((e) => e.userId));
}

/**
 * Admits one entry or all: each gets its own join details (the same MeetingData / JoinResponse a
 * direct join would have given), becomes a member, and its sockets join the meeting room. Admitting
 * someone already admitted is a no-op, so a retried admit never admits twice.
 */
export async function admit(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'admit' }>,
): Promise<WaitingRoomView & { admitted: string[] }> {
  await requireHost(ctx, deps, msg.caller);
  const s = ctx.state;
  const ids = targets(ctx, msg);
  if (!msg.all && !ids.size) {
    if (msg.userId && s.members[msg.userId]) return { ...view(ctx), admitted: [] };
    throw new AppError('waiting_entry_not_found', `${msg.userId} is not in the waiting room`);
  }
  const entries = s.waiting!.filter((e) => ids.has(e.userId));
  const data: MeetingData[] = [];
  for (const e of entries) data.push(await deps.joinEvent(ctx.address.tenant, e.caller, s.eventId, e.code));
  const { from } = take(ctx, ids);
  const t = ctx.address.tenant;
  for (const [i, e] of entries.entries()) {
    delete s.barred![e.userId];
    if (data[i]!.room) s.room = data[i]!.room;
    addMember(ctx, e.caller, e.role, e.device);
    const join = [rooms.meeting(t, s.eventId), ...(e.kind === 'device' ? [rooms.meetingDevices(t, s.eventId)] : [])];
    // A headset's sockets enter by its device room (deviceEntered below), not also by its account's user room.
    if (!e.device) ctx.moveSockets(rooms.user(t, e.userId), { join });
    publish(ctx, 'participantAdmitted', msg.caller.userId, { userId: e.userId });
    publish(ctx, 'participantJoined', e.userId, { userId: e.userId, username: e.username });
    await deviceEntered(ctx, deps, e.caller, e.device, e.code);
    toClient(ctx, e.userId, {
      eventId: s.eventId,
      state: 'admitted',
      meeting: { ...data[i]!, meeting: details(s) },
    });
  }
  queueChanged(ctx, from);
  for (const e of entries) await audited(ctx, deps, 'meeting.admit', msg.caller, e, {});
  return { ...view(ctx), admitted: entries.map((e) => e.userId) };
}

/** Denies one entry or all: told `denied` (with the host's message), out of the meeting's rooms, barred. */
export async function deny(
  ctx: Ctx,
  deps: MeetingActorDeps,
  msg: Extract<MeetingMsg, { type: 'deny' }>,
): Promise<WaitingRoomView & { denied: string[] }> {
  await requireHost(ctx, deps, msg.caller);
  const s = ctx.state;
  const ids = targets(ctx, msg);
  if (!msg.all && !ids.size) {
    if (msg.userId && s.barred![msg.userId]?.reason === 'denied') return { ...view(ctx), denied: [] };
    throw new AppError('waiting_entry_not_found', `${msg.userId} is not in the waiting room`);
  }
  const { taken, from } = take(ctx, ids);
  const t = ctx.address.tenant;
  const at = new Date().toISOString();
  for (const e of taken) {
    s.barred![e.userId] = { reason: 'denied', by: msg.caller.userId, at };
    ctx.moveSockets(rooms.user(t, e.userId), {
      leave: [rooms.meeting(t, s.eventId), rooms.meetingDevices(t, s.eventId)],
    });
    publish(ctx, 'participantDenied', msg.caller.userId, { userId: e.userId });
    toClient(ctx, e.userId, { eventId: s.eventId, state: 'denied', ...(msg.message ? { message: msg.message } : {}) });
  }
  queueChanged(ctx, from);
  const message = msg.message ? { message: msg.message } : {};
  for (const e of taken) await audited(ctx, deps, 'meeting.deny', msg.caller, e, message);
  return { ...view(ctx), denied: taken.map((e) => e.userId) };
}

/** One audit entry per admitted or denied entry: the host, the waiting user, how they came. */
function audited(
  ctx: Ctx,
  deps: MeetingActorDeps,
  action: string,
  host: Caller,
  e: WaitingEntry,
  extra: Record<string, unknown>,
): Promise<void> {
  const details = {
    kind: e.kind,
    role: e.role,
    invited: e.invited,
    ...(e.returning ? { returning: e.returning } : {}),
  };
  return deps.audit(ctx.address.tenant, {
    action,
    outcome: 'success',
    actorId: host.actorUserId ?? host.userId,
    eventId: ctx.state.eventId,
    subjectId: e.userId,
    details: { ...details, ...extra, ...(host.actorUserId ? { onBehalfOf: host.userId } : {}) },
  });
}

/** The waiting client went away (disconnect, closed screen): its entry goes; a no-op once admitted. */
export function leave(ctx: Ctx, caller: Caller): { left: boolean } {
  const { taken, from } = take(ctx, new Set([caller.userId]));
  if (!taken.length) return { left: false };
  publish(ctx, 'waitingLeft', caller.userId, { userId: caller.userId });
  toClient(ctx, caller.userId, { eventId: ctx.state.eventId, state: 'left' });
  queueChanged(ctx, from);
  return { left: true };
}

/** Timer turn: entries past their expiry leave the queue and are told `expired`. */
export function expire(ctx: Ctx): void {
  const now = Date.now();
  const ids = new Set(ctx.state.waiting!.filter((e) => e.expiresAt <= now).map((e) => e.userId));
  if (!ids.size) return armExpiry(ctx);
  const { taken, from } = take(ctx, ids);
  for (const e of taken) {
    publish(ctx, 'waitingExpired', undefined, { userId: e.userId });
    toClient(ctx, e.userId, { eventId: ctx.state.eventId, state: 'expired' });
  }
  queueChanged(ctx, from);
}

export async function waitingRoom(ctx: Ctx, deps: MeetingActorDeps, caller: Caller): Promise<WaitingRoomView> {
  await requireHost(ctx, deps, caller);
  return view(ctx);
}
