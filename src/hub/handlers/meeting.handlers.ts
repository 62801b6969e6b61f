import { z } from 'zod';
import {
  InitEventRequest,
  JoinCallRequest,
  MeetingRef,
  NotifyAction,
  NotifyRequest,
  ShareImageRequest,
} from '../../actors/meeting.schema.js';
import type { ActorAddress } from '../../actors/runtime/types.js';
import { checkSharedImage } from '../../core/share-image.js';
import { rooms } from '../../realtime/rooms.js';
import { callerOf, method } from '../method.js';
import type { HubContext, HubSocket } from '../hub.types.js';

const meetingAt = (socket: HubSocket, eventId: string): ActorAddress => ({
  tenant: socket.data.tenant,
  kind: 'meeting',
  id: eventId,
});

/** Asks the meeting actor and, once it accepted the caller, puts this socket in the meeting room. */
async function enter(ctx: HubContext, socket: HubSocket, eventId: string, type: 'init' | 'join'): Promise<unknown> {
  const reply = await ctx.actors.ask(meetingAt(socket, eventId), { type, caller: callerOf(socket) });
  await socket.join(rooms.meeting(socket.data.tenant, eventId));
  return reply;
}

const simple = (
  name: 'startRecording' | 'stopRecording' | 'requestHostAccess' | 'clearImage',
  op: `hub.${typeof name}`,
) =>
  method({
    name,
    op,
    args: z.tuple([MeetingRef]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), { type: name, caller: callerOf(socket) }),
  });

/** Meeting methods: each is one ask of the event's meeting actor. */
export const meetingMethods = [
  method({
    name: 'initEvent',
    op: 'hub.initEvent',
    args: z.tuple([InitEventRequest]),
    run: (ctx, socket, [req]) => enter(ctx, socket, req.eventId, 'init'),
  }),
  method({
    name: 'joinEvent',
    op: 'hub.joinEvent',
    args: z.tuple([JoinCallRequest]),
    run: (ctx, socket, [req]) => enter(ctx, socket, req.eventId, 'join'),
  }),
  method({
    name: 'getMeetingDetails',
    op: 'hub.getMeetingDetails',
    args: z.tuple([JoinCallRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), { type: 'details', caller: callerOf(socket) }),
  }),
  method({
    name: 'notify',
    op: 'hub.notify',
    args: z.tuple([NotifyAction, NotifyRequest]),
    run: (ctx, socket, [action, req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), {
        type: 'notify',
        caller: callerOf(socket),
        action,
        data: req.data,
      }),
  }),
  simple('startRecording', 'hub.startRecording'),
  simple('stopRecording', 'hub.stopRecording'),
  simple('requestHostAccess', 'hub.requestHostAccess'),
  simple('clearImage', 'hub.clearImage'),
  method({
    name: 'shareImage',
    op: 'hub.shareImage',
    args: z.tuple([ShareImageRequest]),
    run: async (ctx, socket, [req]) => {
      await checkSharedImage(req.image, (hash) => ctx.canReadMedia(socket.data.principal, hash));
      // The grant precedes the push, so a headset fetching the bytes on onShareImage is already allowed.
      if ('hash' in req.image) await ctx.shareMediaToEvent(socket.data.principal, req.eventId, req.image.hash);
      return ctx.actors.ask(meetingAt(socket, req.eventId), { type: 'shareImage', caller: callerOf(socket), req });
    },
  }),
];
