import { AppError } from '../kernel/errors.js';
import { rooms } from '../realtime/rooms.js';
import type { ActorBehavior, ActorContext } from './runtime/types.js';
import type { Caller } from '../kernel/caller.js';
import type { DeviceMsg, DeviceState } from './device.schema.js';
import type {
  DevicePush,
  HeadsetDeviceInfo,
  RapidConnectUserInfo,
  RemoteControlPush,
  RemoteControlRequest,
} from '../contracts/device.schema.js';

/** One entry of the audit trail of device control (remote control, peripherals). */
export interface DeviceAuditEntry {
  action: string;
  actorId: string;
  deviceId: string;
  outcome: 'success' | 'failure';
  details: Record<string, unknown>;
  /** The consultation the device is controlled in. */
  eventId?: string;
}

/** Who controls: the person at the keyboard (the impersonator while impersonating, naming whom for). */
function controller(caller: Caller): { actorId: string; onBehalfOf?: string } {
  return caller.actorUserId ? { actorId: caller.actorUserId, onBehalfOf: caller.userId } : { actorId: caller.userId };
}

export interface DeviceActorDeps {
  /** Heartbeat cadence announced to headsets. */
  heartbeatIntervalMs: number;
  /** A headset silent for this long is marked offline (an actor timer, so it fires on whichever node owns it). */
  offlineAfterMs: number;
  audit(tenant: string, entry: DeviceAuditEntry): Promise<void>;
  /**
   * Keeps the device's record (the one getDevice lists) showing what this actor knows: called when the
   * status or the reported info changes, not on every heartbeat. A device no one mapped has no record.
   */
  recordStatus(tenant: string, status: DevicePush): Promise<void>;
}

type Ctx = ActorContext<DeviceState>;
const OFFLINE_TIMER = 'offline';

function push(s: DeviceState): DevicePush {
  return {
    deviceId: s.deviceId,
    status: s.status,
    ...(s.meetingId ? { meetingId: s.meetingId } : {}),
    ...(s.info ? { info: s.info } : {}),
    ...(s.lastHeartbeatAt ? { lastHeartbeatAt: s.lastHeartbeatAt } : {}),
  };
}

/** Rooms that watch a device: its own sockets and, while it is in one, its meeting. */
function watchers(ctx: Ctx): string[] {
  const t = ctx.address.tenant;
  return [rooms.device(t, ctx.state.deviceId), ...(ctx.state.meetingId ? [rooms.meeting(t, ctx.state.meetingId)] : [])];
}

function requireAccount(s: DeviceState, caller: Caller): void {
  if (!s.registered || s.accountId !== caller.userId)
    throw new AppError('forbidden', 'This device is registered to another account; call initRapidConnect first');
}

/** Only a participant of the meeting the device is in may control it. */
function requireInMeeting(s: DeviceState, meetingId: string, member: boolean): void {
  if (!s.registered) throw new AppError('device_not_found', 'No such device');
  if (s.meetingId !== meetingId) throw new AppError('forbidden', 'The device is not in this meeting');
  if (!member) throw new AppError('forbidden', 'Only a participant of the meeting may control its devices');
}

async function rapidConnect(
  ctx: Ctx,
  deps: DeviceActorDeps,
  caller: Caller,
  joinCode: string,
): Promise<RapidConnectUserInfo> {
  const s = ctx.state;
  if (s.registered && s.accountId !== caller.userId)
    throw new AppError('conflict', 'This device is registered to another account');
  Object.assign(s, {
    registered: true,
    accountId: caller.userId,
    joinCode,
    status: 'online',
    lastHeartbeatAt: new Date().toISOString(),
  });
  ctx.setTimer(OFFLINE_TIMER, deps.offlineAfterMs, { type: 'offlineTimeout' });
  ctx.emit(watchers(ctx), 'deviceUpdated', push(s));
  await deps.recordStatus(ctx.address.tenant, push(s));
  return {
    deviceId: s.deviceId,
    joinCode,
    userId: caller.userId,
    username: caller.username,
    tenant: ctx.address.tenant,
    ...(s.meetingId ? { meetingId: s.meetingId } : {}),
    heartbeatIntervalMs: deps.heartbeatIntervalMs,
  };
}

async function heartbeat(
  ctx: Ctx,
  deps: DeviceActorDeps,
  caller: Caller,
  meetingId: string | null | undefined,
  info: HeadsetDeviceInfo,
): Promise<DevicePush> {
  const s = ctx.state;
  requireAccount(s, caller);
  if (meetingId && s.meetingId && meetingId !== s.meetingId)
    throw new AppError('forbidden', 'The device is not in this meeting');
  const changed = s.status !== 'online' || JSON.stringify({ ...s.info }) !== JSON.stringify({ ...info });
  s.status = 'online';
  s.info = info;
  s.lastHeartbeatAt = new Date().toISOString();
  ctx.setTimer(OFFLINE_TIMER, deps.offlineAfterMs, { type: 'offlineTimeout' });
  ctx.emit(watchers(ctx), 'deviceInfo', push(s));
  if (changed) {
    ctx.emit(watchers(ctx), 'deviceUpdated', push(s));
    await deps.recordStatus(ctx.address.tenant, push(s));
  }
  return push(s);
}

async function offline(ctx: Ctx, deps: DeviceActorDeps): Promise<DevicePush> {
  if (ctx.state.status !== 'offline') {
    ctx.state.status = 'offline';
    ctx.state.controllerId = undefined;
    ctx.emit(watchers(ctx), 'deviceUpdated', push(ctx.state));
    await deps.recordStatus(ctx.address.tenant, push(ctx.state));
  }
  return push(ctx.state);
}

function assign(ctx: Ctx, caller: Caller, eventId: string): DevicePush {
  const s = ctx.state;
  if (!s.registered) throw new AppError('device_not_found', 'No such device');
  s.meetingId = eventId;
  s.controllerId = undefined;
  const payload = { deviceId: s.deviceId, eventId, addedBy: caller.userId, device: push(s) };
  ctx.emit(watchers(ctx), 'onDeviceAdded', payload);
  ctx.emit(rooms.user(ctx.address.tenant, caller.userId), 'onDeviceAdded', payload);
  return push(s);
}

/** Out of the meeting the meeting actor took it out of (a later meeting it joined meanwhile stays). */
function leaveMeeting(ctx: Ctx, eventId: string): DevicePush {
  const s = ctx.state;
  if (s.meetingId !== eventId) return push(s);
  delete s.meetingId;
  s.controllerId = undefined;
  ctx.emit(rooms.device(ctx.address.tenant, s.deviceId), 'deviceUpdated', push(s));
  return push(s);
}

/** Starts or stops a peripheral of the device; recorded (who, which peripheral, which consultation) before it applies. */
async function peripheral(
  ctx: Ctx,
  deps: DeviceActorDeps,
  msg: Extract<DeviceMsg, { type: 'startPeripheral' | 'stopPeripheral' }>,
): Promise<DevicePush & { peripherals: DeviceState['peripherals'] }> {
  const s = ctx.state;
  requireInMeeting(s, msg.req.eventId, msg.member);
  if (msg.type === 'stopPeripheral' && !s.peripherals[msg.req.peripheralId])
    throw new AppError('invalid_state', 'The peripheral is not running');
  const { actorId, onBehalfOf } = controller(msg.caller);
  await deps.audit(ctx.address.tenant, {
    action: msg.type === 'startPeripheral' ? 'peripheral.start' : 'peripheral.stop',
    actorId,
    deviceId: s.deviceId,
    eventId: msg.req.eventId,
    outcome: 'success',
    details: {
      peripheralId: msg.req.peripheralId,
      ...(msg.type === 'startPeripheral' ? { peripheralType: msg.req.peripheralType } : {}),
      ...(onBehalfOf ? { onBehalfOf } : {}),
    },
  });
  const at = new Date().toISOString();
  if (msg.type === 'startPeripheral') {
    const r = msg.req;
    s.peripherals[r.peripheralId] = {
      peripheralId: r.peripheralId,
      peripheralType: r.peripheralType,
      settings: r.settings,
      startedBy: msg.caller.userId,
      startedAt: at,
    };
    ctx.emit(watchers(ctx), 'peripheralStarted', {
      deviceId: s.deviceId,
      eventId: r.eventId,
      ...s.peripherals[r.peripheralId],
    });
  } else {
    delete s.peripherals[msg.req.peripheralId];
    ctx.emit(watchers(ctx), 'peripheralStopped', {
      deviceId: s.deviceId,
      eventId: msg.req.eventId,
      peripheralId: msg.req.peripheralId,
      stoppedBy: msg.caller.userId,
      stoppedAt: at,
    });
  }
  return { ...push(s), peripherals: { ...s.peripherals } };
}

/** The caller takes remote control of the headset (recorded before it applies: who, which device, which consultation). */
async function requestRemote(
  ctx: Ctx,
  deps: DeviceActorDeps,
  caller: Caller,
  meetingId: string,
  member: boolean,
): Promise<{ deviceId: string; controllerId: string }> {
  const s = ctx.state;
  requireInMeeting(s, meetingId, member);
  const { actorId, onBehalfOf } = controller(caller);
  await deps.audit(ctx.address.tenant, {
    action: 'device.requestRemote',
    actorId,
    deviceId: s.deviceId,
    eventId: meetingId,
    outcome: 'success',
    details: onBehalfOf ? { onBehalfOf } : {},
  });
  s.controllerId = caller.userId;
  const cmd = nextCommand(ctx, caller, meetingId, { deviceId: s.deviceId, command: 'remoteRequested' });
  ctx.emit(rooms.device(ctx.address.tenant, s.deviceId), 'onRemoteControl', cmd);
  return { deviceId: s.deviceId, controllerId: caller.userId };
}

function nextCommand(ctx: Ctx, caller: Caller, meetingId: string, req: RemoteControlRequest): RemoteControlPush {
  ctx.state.commandSeq += 1;
  return {
    deviceId: ctx.state.deviceId,
    meetingId,
    commandId: `${ctx.state.deviceId}:${ctx.state.commandSeq}`,
    command: req.command,
    ...(req.params ? { params: req.params } : {}),
    from: caller.userId,
  };
}

async function remoteControl(
  ctx: Ctx,
  deps: DeviceActorDeps,
  msg: Extract<DeviceMsg, { type: 'remoteControl' }>,
): Promise<{ commandId: string; deliveredAt: string }> {
  const s = ctx.state;
  const { actorId, onBehalfOf } = controller(msg.caller);
  const base = {
    action: 'device.remoteControl',
    actorId,
    deviceId: s.deviceId,
    eventId: msg.meetingId,
  };
  const who = onBehalfOf ? { onBehalfOf } : {};
  try {
    requireInMeeting(s, msg.meetingId, msg.member);
    if (s.controllerId !== msg.caller.userId)
      throw new AppError('forbidden', 'Request remote control of the device first');
  } catch (e) {
    await deps.audit(ctx.address.tenant, {
      ...base,
      outcome: 'failure',
      details: { meetingId: msg.meetingId, command: msg.req.command, code: (e as AppError).code, ...who },
    });
    throw e;
  }
  const cmd = nextCommand(ctx, msg.caller, msg.meetingId, msg.req);
  await deps.audit(ctx.address.tenant, {
    ...base,
    outcome: 'success',
    details: {
      meetingId: msg.meetingId,
      command: cmd.command,
      commandId: cmd.commandId,
      params: cmd.params ?? {},
      ...who,
    },
  });
  ctx.emit(rooms.device(ctx.address.tenant, s.deviceId), 'onRemoteControl', cmd);
  return { commandId: cmd.commandId, deliveredAt: new Date().toISOString() };
}

function route(ctx: Ctx, deps: DeviceActorDeps, msg: DeviceMsg): unknown {
  switch (msg.type) {
    case 'rapidConnect':
      return rapidConnect(ctx, deps, msg.caller, msg.joinCode);
    case 'assignMeeting':
      return assign(ctx, msg.caller, msg.eventId);
    case 'leaveMeeting':
      return leaveMeeting(ctx, msg.eventId);
    case 'heartbeat':
      return heartbeat(ctx, deps, msg.caller, msg.meetingId, msg.info);
    case 'offlineTimeout':
      return offline(ctx, deps);
    case 'startPeripheral':
    case 'stopPeripheral':
      return peripheral(ctx, deps, msg);
    case 'requestRemote':
      return requestRemote(ctx, deps, msg.caller, msg.meetingId, msg.member);
    case 'remoteControl':
      return remoteControl(ctx, deps, msg);
    case 'get':
      if (!ctx.state.registered) throw new AppError('device_not_found', 'No such device');
      return push(ctx.state);
    default:
      throw new AppError('bad_request', 'Unknown device message');
  }
}

/**
 * One actor per headset (keyed by its one id: the device record's id when getDevice mapped its hardware,
 * else the hardware id; decision 312): heartbeats, peripherals and remote control go
 * through it, and a missed heartbeat turns it offline through an actor timer wherever it lives.
 */
export function deviceActor(deps: DeviceActorDeps): ActorBehavior<DeviceState, DeviceMsg, unknown> {
  return {
    kind: 'device',
    initialState: (address) => ({
      deviceId: address.id,
      registered: false,
      status: 'offline',
      peripherals: {},
      commandSeq: 0,
    }),
    receive: (ctx, msg) => route(ctx, deps, msg),
    // `get` only reads: it runs on the state as persisted, frozen, with no write-through (decision 1120).
    readOnly: (msg) => msg.type === 'get',
  };
}
