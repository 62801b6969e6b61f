import { z } from 'zod';
import { Id } from '../../contracts/common.schema.js';
import {
  HeadsetDeviceInfo,
  JoinCode,
  OptionalMeetingId,
  RemoteControlRequest,
  StartPeripheralRequest,
  StopPeripheralRequest,
  UniqueId,
} from '../../contracts/device.schema.js';
import type { ActorAddress } from '../../actors/runtime/types.js';
import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import { callerOf, method } from '../method.js';
import type { DeviceJoin } from '../../actors/meeting/meeting.schema.js';
import { enter } from './meeting.handlers.js';
import type { HubContext, HubSocket } from '../hub.types.js';

/**
 * The device actor an id names: a device's id or any hardware id mapped to it reach the same actor
 * (docs/decisions/312); a hardware id no one mapped is its own identity.
 */
async function deviceAt(ctx: HubContext, socket: HubSocket, id: string): Promise<ActorAddress> {
  const own = socket.data.deviceId;
  const resolved =
    own && (id === own || id === socket.data.hardwareId) ? own : await ctx.resolveDevice(socket.data.tenant, id);
  return { tenant: socket.data.tenant, kind: 'device', id: resolved };
}
const meetingAt = (socket: HubSocket, id: string): ActorAddress => ({
  tenant: socket.data.tenant,
  kind: 'meeting',
  id,
});

function ownDevice(socket: HubSocket): string {
  if (!socket.data.deviceId) throw new AppError('invalid_state', 'Call initRapidConnect on this connection first');
  return socket.data.deviceId;
}

/** Whether the caller joined the meeting: only participants of a device's meeting may control it. */
async function isMember(ctx: HubContext, socket: HubSocket, eventId: string): Promise<boolean> {
  const r = await ctx.actors.ask<{ member: boolean }>(meetingAt(socket, eventId), {
    type: 'isMember',
    userId: socket.data.principal.userId,
  });
  return r.member;
}

/**
 * A headset joins a meeting by code as a member, through the meeting actor's join like any person
 * (decision 1010): admitted at once, or held by the waiting room, a lock or a bar until a host
 * admits it. Only once it is a member is its device put in the meeting (device actor, deviceIds,
 * the meeting's rooms): a waiting headset gets neither join details nor the meeting's events.
 */
function joinAsDevice(ctx: HubContext, socket: HubSocket, eventId: string, code: string, device: DeviceJoin) {
  return enter(ctx, socket, eventId, 'join', { code: code.toUpperCase(), device });
}

const held = (reply: { status?: string }) => reply.status === 'waiting' || reply.status === 'consentRequired';

async function rapidConnect(ctx: HubContext, socket: HubSocket, uniqueId: string, joinCode: string): Promise<unknown> {
  const eventId = await ctx.meetings.eventIdForCode(socket.data.tenant, joinCode);
  const address = await deviceAt(ctx, socket, uniqueId);
  // Claiming needs a registration of the hardware id (or its device) to this account (decision 1041).
  await ctx.assertDeviceClaim(socket.data.principal, [uniqueId, address.id]);
  const info = await ctx.actors.ask<Record<string, unknown>>(address, {
    type: 'rapidConnect',
    caller: callerOf(socket),
    joinCode,
  });
  socket.data.deviceId = address.id;
  socket.data.hardwareId = uniqueId;
  await socket.join(rooms.device(socket.data.tenant, address.id));
  const reply = await joinAsDevice(ctx, socket, eventId, joinCode, { deviceId: address.id });
  // Waiting: the `waitingRoom` push carries the join details once a host admits the headset.
  if (held(reply)) return { ...info, uniqueId, meetingId: eventId, ...reply };
  return { ...info, uniqueId, meetingId: eventId, meeting: reply };
}

/**
 * addDeviceToEvent: the registered headset joins another meeting by its code (the code must be that
 * event's). Attached to the event once it is a member; the DevicePush with the join details as
 * `meeting`, or the waiting ack.
 */
async function addToEvent(ctx: HubContext, socket: HubSocket, joinCode: string, eventId: string): Promise<unknown> {
  const deviceId = ownDevice(socket);
  const forCode = await ctx.meetings.eventIdForCode(socket.data.tenant, joinCode).catch(() => undefined);
  if (forCode !== eventId) throw new AppError('event_not_found', 'No event for this id and join code');
  const reply = await joinAsDevice(ctx, socket, eventId, joinCode, { deviceId, attach: true });
  if (held(reply)) return reply;
  const device = await ctx.actors.ask<Record<string, unknown>>(await deviceAt(ctx, socket, deviceId), { type: 'get' });
  return { ...device, meeting: reply };
}

/** Headset methods (initRapidConnect, addDeviceToEvent, deviceStatus) and control methods on a headset. */
export const deviceMethods = [
  method({
    name: 'initRapidConnect',
    requires: 'devices:report',
    note: 'claims the hardware id for the caller: device accounts whose account it is registered to (decision 1041), and administrators',
    args: z.tuple([UniqueId, JoinCode]),
    run: (ctx, socket, [uniqueId, joinCode]) => rapidConnect(ctx, socket, uniqueId, joinCode),
  }),
  method({
    name: 'addDeviceToEvent',
    requires: 'devices:register',
    args: z.tuple([JoinCode, Id]),
    run: (ctx, socket, [joinCode, eventId]) => addToEvent(ctx, socket, joinCode, eventId),
  }),
  method({
    name: 'deviceStatus',
    requires: 'devices:report',
    args: z.tuple([OptionalMeetingId, HeadsetDeviceInfo]),
    run: async (ctx, socket, [meetingId, info]) => {
      const own = ownDevice(socket);
      const address = await deviceAt(ctx, socket, info.deviceId);
      if (address.id !== own) throw new AppError('forbidden', 'A connection reports only its own device');
      return ctx.actors.ask(address, {
        type: 'heartbeat',
        caller: callerOf(socket),
        meetingId,
        info: { ...info, deviceId: own },
      });
    },
  }),
  method({
    name: 'startPeripheral',
    requires: 'devices:control',
    args: z.tuple([StartPeripheralRequest]),
    run: async (ctx, socket, [req]) =>
      ctx.actors.ask(await deviceAt(ctx, socket, req.deviceId), {
        type: 'startPeripheral',
        caller: callerOf(socket),
        member: await isMember(ctx, socket, req.eventId),
        req,
      }),
  }),
  method({
    name: 'stopPeripheral',
    requires: 'devices:control',
    args: z.tuple([StopPeripheralRequest]),
    run: async (ctx, socket, [req]) =>
      ctx.actors.ask(await deviceAt(ctx, socket, req.deviceId), {
        type: 'stopPeripheral',
        caller: callerOf(socket),
        member: await isMember(ctx, socket, req.eventId),
        req,
      }),
  }),
  method({
    name: 'requestRemote',
    requires: 'devices:control',
    args: z.tuple([Id, Id]),
    run: async (ctx, socket, [meetingId, deviceId]) =>
      ctx.actors.ask(await deviceAt(ctx, socket, deviceId), {
        type: 'requestRemote',
        caller: callerOf(socket),
        member: await isMember(ctx, socket, meetingId),
        meetingId,
      }),
  }),
  method({
    name: 'remoteControl',
    requires: 'devices:control',
    args: z.tuple([Id, RemoteControlRequest]),
    run: async (ctx, socket, [meetingId, req]) =>
      ctx.actors.ask(await deviceAt(ctx, socket, req.deviceId), {
        type: 'remoteControl',
        caller: callerOf(socket),
        member: await isMember(ctx, socket, meetingId),
        meetingId,
        req,
      }),
  }),
];
