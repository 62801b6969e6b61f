import { z } from 'zod';
import { AppError } from '../../kernel/errors.js';
import { rooms } from '../../realtime/rooms.js';
import { method } from '../method.js';
import { IceCandidateMessage, RoomId, SdpMessage } from '../../contracts/signalling.schema.js';
import type { HubContext, HubSocket } from '../hub.types.js';

/** Members of the call or meeting a signalling message names, from its actor (the one source of truth). */
async function membersOf(
  ctx: HubContext,
  socket: HubSocket,
  scope: { eventId?: string; callId?: string },
): Promise<string[]> {
  const tenant = socket.data.tenant;
  if (scope.callId)
    return (
      await ctx.actors.ask<{ memberIds: string[] }>({ tenant, kind: 'call', id: scope.callId }, { type: 'members' })
    ).memberIds;
  return (
    await ctx.actors.ask<{ memberIds: string[] }>({ tenant, kind: 'meeting', id: scope.eventId! }, { type: 'members' })
  ).memberIds;
}

/** Relays offer/answer/iceCandidate to the target's sockets, only when sender and target share the call or meeting. */
async function relay(
  ctx: HubContext,
  socket: HubSocket,
  name: 'offer' | 'answer' | 'iceCandidate',
  msg: SdpMessage | IceCandidateMessage,
): Promise<{ delivered: true }> {
  const from = socket.data.principal.userId;
  const members = await membersOf(ctx, socket, msg);
  if (!members.includes(from) || !members.includes(msg.targetUserId))
    throw new AppError('forbidden', 'Signalling is relayed only between members of the same meeting or call');
  const { targetUserId, ...rest } = msg;
  const target = ctx.io.to(rooms.user(socket.data.tenant, targetUserId));
  if (name === 'iceCandidate')
    target.emit('iceCandidate', { ...(rest as Omit<IceCandidateMessage, 'targetUserId'>), fromUserId: from });
  else target.emit(name, { ...(rest as Omit<SdpMessage, 'targetUserId'>), fromUserId: from });
  return { delivered: true };
}

/**
 * A room is an event's room (docs/decisions/220): its id is the event id and its members are the
 * event's organizer, participants and attached devices, the people who may see each other there.
 */
function isRoomMember(ctx: HubContext, socket: HubSocket, roomId: string): Promise<boolean> {
  return ctx.meetings.isParticipant(socket.data.tenant, roomId, socket.data.principal.userId);
}

/** Same answer for a room that does not exist and one the caller is not in: ids are not probed. */
async function requireRoomMember(ctx: HubContext, socket: HubSocket, roomId: string): Promise<void> {
  if (!(await isRoomMember(ctx, socket, roomId))) throw new AppError('forbidden', 'Not a member of this room');
}

/** WebRTC signalling and event rooms. */
export const signallingMethods = [
  method({
    name: 'offer',
    requires: 'meetings:join',
    args: z.tuple([SdpMessage]),
    run: (ctx, socket, [msg]) => relay(ctx, socket, 'offer', msg),
  }),
  method({
    name: 'answer',
    requires: 'meetings:join',
    args: z.tuple([SdpMessage]),
    run: (ctx, socket, [msg]) => relay(ctx, socket, 'answer', msg),
  }),
  method({
    name: 'iceCandidate',
    requires: 'meetings:join',
    args: z.tuple([IceCandidateMessage]),
    run: (ctx, socket, [msg]) => relay(ctx, socket, 'iceCandidate', msg),
  }),
  method({
    name: 'joinRoom',
    requires: 'meetings:join',
    args: z.tuple([RoomId]),
    run: async (ctx, socket, [roomId]) => {
      await requireRoomMember(ctx, socket, roomId);
      await socket.join(rooms.custom(socket.data.tenant, roomId));
      return { roomId };
    },
  }),
  method({
    name: 'sayHiToRoom',
    requires: 'meetings:join',
    args: z.tuple([RoomId]),
    run: async (ctx, socket, [roomId]) => {
      const room = rooms.custom(socket.data.tenant, roomId);
      if (!socket.rooms.has(room)) throw new AppError('forbidden', 'Join the room first');
      // Membership is checked again: someone removed from the event since joining greets no one.
      if (!(await isRoomMember(ctx, socket, roomId))) {
        await socket.leave(room);
        throw new AppError('forbidden', 'Not a member of this room');
      }
      socket.to(room).emit('sayHi', {
        roomId,
        from: { userId: socket.data.principal.userId, username: socket.data.principal.username },
      });
      return { roomId };
    },
  }),
];
