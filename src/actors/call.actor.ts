import { AppError } from '../kernel/errors.js';
import { rooms } from '../realtime/rooms.js';
import type { ActorBehavior, ActorContext } from './runtime/types.js';
import type { Caller } from '../kernel/caller.js';
import type { CallInfo, EndCallPush, InitCallRequest } from '../contracts/call.schema.js';
import type { CallMsg, CallState } from './call.schema.js';

/** What the call actor needs from the rest of the service (wired in the hub role). */
export interface CallActorDeps {
  ringTimeoutMs: number;
  /** The subset of `ids` that are active users of the tenant (nobody rings a stranger or another tenant). */
  activeUserIds(tenant: string, ids: string[]): Promise<Set<string>>;
  /**
   * Writes the call's history record (frequent contacts, call list) under the turn's epoch; returns
   * false when a newer owner already wrote it (the runtime then counts the write as fenced).
   */
  saveRecord(tenant: string, call: CallState, epoch: number): Promise<boolean>;
  /** The status the call's history record holds, none when the call was never recorded. */
  recordedStatus(tenant: string, callId: string): Promise<CallState['status'] | undefined>;
  /** How often an active call checks that its parties are still connected (HUB_CALL_PRESENCE_CHECK_MS). */
  presenceCheckMs: number;
  /** The subset of `ids` with a hub connection on any node now (presence). */
  onlineUserIds(tenant: string, ids: string[]): Promise<Set<string>>;
}

type Ctx = ActorContext<CallState>;
const RING_TIMER = 'ring';
const PRESENCE_TIMER = 'presence';

/** The result of `members`: used by the hub to relay WebRTC signalling only inside the call. */
export interface CallMembers {
  status: CallState['status'];
  memberIds: string[];
}

function info(s: CallState): CallInfo {
  const { awayIds: _away, ...call } = s;
  return { ...call, invitedIds: [...s.invitedIds], joinedIds: [...s.joinedIds] };
}

function parties(s: CallState): string[] {
  return [...new Set([s.callerId, ...s.invitedIds])];
}

/** History writes go through the runtime's fence, so a stale owner cannot overwrite a newer one. */
async function record(ctx: Ctx, deps: CallActorDeps): Promise<void> {
  const snapshot = info(ctx.state);
  await ctx.fencedWrite(async (epoch) => ((await deps.saveRecord(ctx.address.tenant, snapshot, epoch)) ? true : false));
}

function isLive(s: CallState): boolean {
  return s.status === 'ringing' || s.status === 'active';
}

const FINISHED: readonly CallState['status'][] = ['ended', 'missed', 'cancelled'];

function requireParty(s: CallState, caller: Caller): void {
  if (s.status === 'idle') throw new AppError('call_not_found', 'No such call');
  if (!parties(s).includes(caller.userId)) throw new AppError('call_not_found', 'No such call');
}

async function init(ctx: Ctx, deps: CallActorDeps, msg: Extract<CallMsg, { type: 'init' }>): Promise<CallInfo> {
  const s = ctx.state;
  if (s.status !== 'idle') {
    if (s.callerId === msg.caller.userId) return info(s);
    throw new AppError('conflict', 'A call with this id already exists');
  }
  const callees = [...new Set(msg.req.calleeIds)].filter((id) => id !== msg.caller.userId);
  if (!callees.length) throw new AppError('validation_failed', 'calleeIds: nobody to call');
  // A finished call's snapshot expires (decision 1104); its record stays, and its id is never placed again.
  const recorded = await deps.recordedStatus(ctx.address.tenant, ctx.address.id);
  if (recorded && FINISHED.includes(recorded)) throw new AppError('conflict', 'A call with this id already exists');
  const known = await deps.activeUserIds(ctx.address.tenant, callees);
  const unknown = callees.find((id) => !known.has(id));
  if (unknown) throw new AppError('user_not_found', `No user ${unknown}`);
  ctx.state = newCall(ctx.address.id, msg.caller, msg.callerName, msg.req, callees);
  ctx.setTimer(RING_TIMER, deps.ringTimeoutMs, { type: 'ringTimeout' });
  await record(ctx, deps);
  const push = { call: info(ctx.state) };
  ctx.emit(
    callees.map((id) => rooms.user(ctx.address.tenant, id)),
    'onNewCall',
    push,
  );
  return info(ctx.state);
}

function newCall(
  callId: string,
  caller: Caller,
  callerName: string,
  req: InitCallRequest,
  callees: string[],
): CallState {
  return {
    callId,
    status: 'ringing',
    callType: req.callType,
    callerId: caller.userId,
    callerName,
    ...(req.eventId ? { eventId: req.eventId } : {}),
    invitedIds: callees,
    joinedIds: [caller.userId],
    startedAt: new Date().toISOString(),
  };
}

async function accept(ctx: Ctx, deps: CallActorDeps, caller: Caller): Promise<CallInfo> {
  const s = ctx.state;
  requireParty(s, caller);
  if (!isLive(s)) throw new AppError('invalid_state', `The call is ${s.status}`);
  if (s.joinedIds.includes(caller.userId)) return info(s);
  s.joinedIds.push(caller.userId);
  if (s.status === 'ringing') {
    s.status = 'active';
    s.answeredAt = new Date().toISOString();
    ctx.clearTimer(RING_TIMER);
    ctx.setTimer(PRESENCE_TIMER, deps.presenceCheckMs, { type: 'presenceCheck' });
    await record(ctx, deps);
  }
  ctx.emit(
    parties(s).map((id) => rooms.user(ctx.address.tenant, id)),
    'onCallUpdated',
    { call: info(s) },
  );
  return info(s);
}

async function finish(
  ctx: Ctx,
  deps: CallActorDeps,
  status: 'ended' | 'missed' | 'cancelled',
  reason: string,
  by?: string,
): Promise<CallInfo> {
  const s = ctx.state;
  s.status = status;
  s.endedAt = new Date().toISOString();
  s.endReason = reason;
  delete s.awayIds;
  ctx.clearTimer(RING_TIMER);
  ctx.clearTimer(PRESENCE_TIMER);
  await record(ctx, deps);
  // Finished: the record is the call's history; the snapshot expires after the retention (decision 1104).
  ctx.retire();
  const push: EndCallPush = { callId: s.callId, status, reason, ...(by ? { endedBy: by } : {}) };
  ctx.emit(
    parties(s).map((id) => rooms.user(ctx.address.tenant, id)),
    'onEndCall',
    push,
  );
  return info(s);
}

async function cancel(ctx: Ctx, deps: CallActorDeps, caller: Caller, reason?: string): Promise<CallInfo> {
  const s = ctx.state;
  requireParty(s, caller);
  if (s.status !== 'ringing')
    throw new AppError('invalid_state', `Only a ringing call can be cancelled; it is ${s.status}`);
  if (s.callerId !== caller.userId) return finish(ctx, deps, 'ended', reason ?? 'declined', caller.userId);
  return finish(ctx, deps, 'cancelled', reason ?? 'cancelled', caller.userId);
}

async function end(ctx: Ctx, deps: CallActorDeps, caller: Caller, reason?: string): Promise<CallInfo> {
  const s = ctx.state;
  requireParty(s, caller);
  if (!isLive(s)) return info(s);
  const r = await finish(
    ctx,
    deps,
    s.status === 'ringing' && s.callerId === caller.userId ? 'cancelled' : 'ended',
    reason ?? 'hangup',
    caller.userId,
  );
  return r;
}

async function addParticipant(ctx: Ctx, deps: CallActorDeps, caller: Caller, userId: string): Promise<CallInfo> {
  const s = ctx.state;
  requireParty(s, caller);
  if (!s.joinedIds.includes(caller.userId))
    throw new AppError('forbidden', 'Only someone in the call can add a participant');
  if (!isLive(s)) throw new AppError('invalid_state', `The call is ${s.status}`);
  if (parties(s).includes(userId)) return info(s);
  const known = await deps.activeUserIds(ctx.address.tenant, [userId]);
  if (!known.has(userId)) throw new AppError('user_not_found', `No user ${userId}`);
  s.invitedIds.push(userId);
  await record(ctx, deps);
  ctx.emit(rooms.user(ctx.address.tenant, userId), 'onNewCall', { call: info(s) });
  ctx.emit(
    parties(s)
      .filter((id) => id !== userId)
      .map((id) => rooms.user(ctx.address.tenant, id)),
    'onCallUpdated',
    { call: info(s) },
  );
  return info(s);
}

/**
 * An active call whose parties are gone ends by itself: a phone that crashed, lost its network for good or
 * never heard its initCall's answer hangs up nobody. Each check reads who of those in the call has a hub
 * connection; one offline at two checks in a row counts as gone (a blip or a reconnection spans at most
 * one), and once fewer than two are left the call ends with reason `disconnected`, pushed to every party.
 */
async function presenceCheck(ctx: Ctx, deps: CallActorDeps): Promise<CallInfo> {
  const s = ctx.state;
  if (s.status !== 'active') return info(s);
  const online = await deps.onlineUserIds(ctx.address.tenant, s.joinedIds);
  const offline = s.joinedIds.filter((id) => !online.has(id));
  const gone = offline.filter((id) => s.awayIds?.includes(id));
  if (s.joinedIds.length - gone.length < 2) return finish(ctx, deps, 'ended', 'disconnected');
  if (offline.length) s.awayIds = offline;
  else delete s.awayIds;
  ctx.setTimer(PRESENCE_TIMER, deps.presenceCheckMs, { type: 'presenceCheck' });
  return info(s);
}

/**
 * One actor per call id: the single place a call's state lives, whichever node each party is on.
 * Ringing times out through an actor timer (a turn like any other), so a missed call is recorded
 * even when the caller's node has gone.
 */
export function callActor(deps: CallActorDeps): ActorBehavior<CallState, CallMsg, unknown> {
  return {
    kind: 'call',
    initialState: (address) => ({
      callId: address.id,
      status: 'idle',
      callType: 'video',
      callerId: '',
      callerName: '',
      invitedIds: [],
      joinedIds: [],
    }),
    // `members` only reads: it runs on the state as persisted, frozen, with no write-through (decision 1120).
    readOnly: (msg) => msg.type === 'members',
    async receive(ctx, msg) {
      switch (msg.type) {
        case 'init':
          return init(ctx, deps, msg);
        case 'accept':
          return accept(ctx, deps, msg.caller);
        case 'cancel':
          return cancel(ctx, deps, msg.caller, msg.reason);
        case 'end':
          return end(ctx, deps, msg.caller, msg.reason);
        case 'addParticipant':
          return addParticipant(ctx, deps, msg.caller, msg.userId);
        case 'members':
          return {
            status: ctx.state.status,
            memberIds: isLive(ctx.state) ? parties(ctx.state) : [],
          } satisfies CallMembers;
        case 'ringTimeout':
          return ctx.state.status === 'ringing' ? finish(ctx, deps, 'missed', 'no answer') : info(ctx.state);
        case 'presenceCheck':
          return presenceCheck(ctx, deps);
        default:
          throw new AppError('bad_request', 'Unknown call message');
      }
    },
  };
}
