import { z } from 'zod';
import {
  AdmitRequest,
  DenyRequest,
  InitEventRequest,
  JoinCallRequest,
  MeetingRef,
  NotifyAction,
  NotifyRequest,
  ShareImageRequest,
} from '../../contracts/meeting.schema.js';
import type { DeviceJoin } from '../../actors/meeting/meeting.schema.js';
import type { ActorAddress } from '../../actors/runtime/types.js';
import {
  AnswerHostAccessRequest,
  EndMeetingRequest,
  HostChangeRequest,
  LockRequest,
  MuteRequestRequest,
  RemoveParticipantRequest,
} from '../../contracts/meeting-controls.schema.js';
import { dedupe as dedupeFor } from '../../actors/meeting/meeting-rooms.js';
import { checkSharedImage } from '../../core/media/share-image.js';
import { rooms, streams } from '../../realtime/rooms.js';
import { enroll } from '../hub.resume.js';
import { callerOf, method, methodOfHelper, type MatchesEvent } from '../method.js';
import type { HubContext, HubSocket } from '../hub.types.js';
import { RULE_NOTES, type Requirement } from '../../kernel/requirement.js';

/** The reply goes straight into the acknowledgement (serialised there): the actor's reply, uncopied. */
const SHARED = { shareReply: true } as const;

const meetingAt = (socket: HubSocket, eventId: string): ActorAddress => ({
  tenant: socket.data.tenant,
  kind: 'meeting',
  id: eventId,
});

/**
 * Asks the meeting actor and, once it accepted the caller, puts this socket in the meeting room (a
 * headset also in the meeting's headset room); a caller told to wait stays out of it until a host
 * admits them (the admission moves their sockets in). Person and headset joins alike (decision 1010).
 */
export async function enter(
  ctx: HubContext,
  socket: HubSocket,
  eventId: string,
  type: 'init' | 'join',
  extra: { code?: string; device?: DeviceJoin } = {},
): Promise<{ status?: string } & Record<string, unknown>> {
  const reply = await ctx.actors.ask<{ status?: string } & Record<string, unknown>>(meetingAt(socket, eventId), {
    type,
    caller: callerOf(socket),
    ...extra,
  });
  leaveOnDisconnect(ctx, socket, eventId);
  // Held for the waiting room, or for consent to a running recording (decision 910): not in the meeting room yet.
  if (reply?.status === 'waiting' || reply?.status === 'consentRequired') {
    leaveWaitingOnDisconnect(ctx, socket, eventId);
    return reply;
  }
  const t = socket.data.tenant;
  const list = [rooms.meeting(t, eventId), ...(extra.device ? [rooms.meetingDevices(t, eventId)] : [])];
  // On the meeting's roster from now on: its recoverable pushes are kept for it while it is away (decision 1000).
  const stream = extra.device ? streams.device(extra.device.deviceId) : streams.user(socket.data.principal.userId);
  await enroll(ctx, socket, stream, list);
  await socket.join(list);
  return reply;
}

/**
 * A socket in the meeting's room that goes away is a leave of the audit trail. Checked at `disconnecting`
 * (the rooms are still there), so a socket a host admitted from the waiting room counts too, and one
 * still waiting or denied does not. One listener per socket walks every meeting it entered (a listener
 * per meeting piled up on a headset's long-lived socket past Node's limit).
 */
function leaveOnDisconnect(ctx: HubContext, socket: HubSocket, eventId: string): void {
  const first = !socket.data.meetingsEntered;
  const watched = (socket.data.meetingsEntered ??= []);
  if (watched.includes(eventId)) return;
  watched.push(eventId);
  if (!first) return;
  socket.once('disconnecting', () => {
    for (const id of socket.data.meetingsEntered ?? []) {
      if (!socket.rooms.has(rooms.meeting(socket.data.tenant, id))) continue;
      ctx.followUps
        .track(ctx.meetings.left(socket.data.principal, id, 'disconnect'))
        .catch((err) =>
          ctx.logger.error(
            { component: 'hub', eventId: id, err: (err as Error).message },
            'recording a meeting leave failed',
          ),
        );
    }
  });
}

/** A waiting socket that goes away takes its entries out of the queues (a no-op once it was admitted). */
function leaveWaitingOnDisconnect(ctx: HubContext, socket: HubSocket, eventId: string): void {
  const first = !socket.data.waitingIn;
  const waiting = (socket.data.waitingIn ??= []);
  if (waiting.includes(eventId)) return;
  waiting.push(eventId);
  if (!first) return;
  socket.once('disconnect', () => {
    for (const id of socket.data.waitingIn ?? [])
      ctx.followUps
        .track(ctx.actors.ask(meetingAt(socket, id), { type: 'leaveWaiting', caller: callerOf(socket) }))
        .catch((err) =>
          ctx.logger.warn(
            { component: 'hub', eventId: id, err: (err as Error).message },
            'leaving the waiting room failed',
          ),
        );
  });
}

/** A host control's de-duplication id: the caller's request id, so a retried control applies once. */
const dedupe = (socket: HubSocket, name: string, requestId?: string) =>
  dedupeFor(socket.data.principal, name, requestId);

const simple = (name: 'requestHostAccess' | 'clearImage', requires: Requirement) =>
  method({
    name,
    requires,
    args: z.tuple([MeetingRef]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), { type: name, caller: callerOf(socket) }),
  });

/**
 * A host control: one ask of the meeting actor carrying the control's fields, de-duplicated by the
 * caller's request id (decision 900).
 */
const hostControl = <
  N extends 'removeParticipant' | 'endMeeting' | 'lockMeeting' | 'unlockMeeting' | 'transferHost' | 'addHost',
  S extends z.ZodType<{ eventId: string; requestId?: string }>,
>(
  name: N,
  schema: S & MatchesEvent<N, z.ZodTuple<[S], null>>,
  fields: (req: z.infer<S>) => Record<string, unknown>,
) =>
  methodOfHelper({
    name,
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfMeeting,
    args: z.tuple([schema]),
    run: (ctx, socket, args) => {
      const req = args[0] as z.infer<S>;
      return ctx.actors.ask(
        meetingAt(socket, req.eventId),
        { type: name, caller: callerOf(socket), ...fields(req) },
        dedupe(socket, name, req.requestId),
      );
    },
  });

/** Host controls (decision 900): hosts of the meeting only, each an actor turn. */
const controlMethods = [
  hostControl('removeParticipant', RemoveParticipantRequest, (r) => ({ userId: r.userId, reason: r.reason })),
  hostControl('endMeeting', EndMeetingRequest, (r) => ({ reason: r.reason })),
  hostControl('lockMeeting', LockRequest, () => ({})),
  hostControl('unlockMeeting', LockRequest, () => ({})),
  hostControl('transferHost', HostChangeRequest, (r) => ({ userId: r.userId })),
  hostControl('addHost', HostChangeRequest, (r) => ({ userId: r.userId })),
  method({
    name: 'muteRequest',
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfMeeting,
    args: z.tuple([MuteRequestRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket, req.eventId),
        { type: 'muteRequest', caller: callerOf(socket), userId: req.userId, media: req.media, message: req.message },
        dedupe(socket, 'muteRequest', req.requestId),
      ),
  }),
  method({
    name: 'answerHostAccess',
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfMeeting,
    args: z.tuple([AnswerHostAccessRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket, req.eventId),
        {
          type: 'answerHostAccess',
          caller: callerOf(socket),
          userId: req.userId,
          grant: req.grant,
          message: req.message,
        },
        dedupe(socket, 'answerHostAccess', req.requestId),
      ),
  }),
];

/** Meeting methods: each is one ask of the event's meeting actor. */
export const meetingMethods = [
  method({
    name: 'initEvent',
    requires: 'meetings:host',
    args: z.tuple([InitEventRequest]),
    run: (ctx, socket, [req]) => enter(ctx, socket, req.eventId, 'init'),
  }),
  method({
    name: 'joinEvent',
    requires: 'meetings:join',
    args: z.tuple([JoinCallRequest]),
    run: (ctx, socket, [req]) => enter(ctx, socket, req.eventId, 'join'),
  }),
  method({
    name: 'getMeetingDetails',
    requires: 'meetings:join',
    args: z.tuple([JoinCallRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), { type: 'details', caller: callerOf(socket) }, SHARED),
  }),
  method({
    name: 'notify',
    requires: 'meetings:host',
    args: z.tuple([NotifyAction, NotifyRequest]),
    run: (ctx, socket, [action, req]) =>
      ctx.actors.ask(
        meetingAt(socket, req.eventId),
        { type: 'notify', caller: callerOf(socket), action, data: req.data },
        SHARED,
      ),
  }),
  method({
    name: 'admit',
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfEvent,
    args: z.tuple([AdmitRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket, req.eventId),
        { type: 'admit', caller: callerOf(socket), userId: req.userId, all: req.all },
        dedupe(socket, 'admit', req.requestId),
      ),
  }),
  method({
    name: 'deny',
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfEvent,
    args: z.tuple([DenyRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket, req.eventId),
        { type: 'deny', caller: callerOf(socket), userId: req.userId, all: req.all, message: req.message },
        dedupe(socket, 'deny', req.requestId),
      ),
  }),
  method({
    name: 'getWaitingRoom',
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfEvent,
    args: z.tuple([MeetingRef]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket, req.eventId), { type: 'waitingRoom', caller: callerOf(socket) }, SHARED),
  }),
  simple('requestHostAccess', 'meetings:join'),
  simple('clearImage', 'meetings:host'),
  method({
    name: 'shareImage',
    requires: 'meetings:host',
    args: z.tuple([ShareImageRequest]),
    run: async (ctx, socket, [req]) => {
      const { principal, tenant } = socket.data;
      const hash = await checkSharedImage(req.image, ctx.ownMedia(tenant), (h) => ctx.canReadMedia(principal, h));
      // The grant precedes the push, so a headset fetching the bytes on onShareImage is already allowed.
      await ctx.shareMediaToEvent(principal, req.eventId, hash);
      return ctx.actors.ask(meetingAt(socket, req.eventId), { type: 'shareImage', caller: callerOf(socket), req });
    },
  }),
  ...controlMethods,
];
