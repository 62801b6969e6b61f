import { z } from 'zod';
import { Id, ObjectIdString } from './common.schema.js';

/** Where a signalling message belongs: exactly one meeting (eventId) or one call (callId). */
const scope = {
  targetUserId: Id,
  eventId: Id.optional(),
  callId: z.uuid().optional(),
};
const oneScope = (v: { eventId?: string; callId?: string }) => Boolean(v.eventId) !== Boolean(v.callId);
const scopeMessage = { message: 'give exactly one of eventId or callId', path: ['eventId'] };

/** offer / answer: an SDP description relayed to one member of the same meeting or call. */
export const SdpMessage = z.object({ ...scope, sdp: z.string().min(1).max(100_000) }).refine(oneScope, scopeMessage);
export type SdpMessage = z.infer<typeof SdpMessage>;

export const IceCandidateMessage = z
  .object({
    ...scope,
    candidate: z.object({
      candidate: z.string().max(4096),
      sdpMid: z.string().max(64).nullable().optional(),
      sdpMLineIndex: z.number().int().min(0).max(1024).nullable().optional(),
      usernameFragment: z.string().max(256).nullable().optional(),
    }),
  })
  .refine(oneScope, scopeMessage);
export type IceCandidateMessage = z.infer<typeof IceCandidateMessage>;

/** joinRoom / sayHiToRoom(roomId): a room is an event's room, named by the event id (docs/decisions/220). */
export const RoomId = ObjectIdString;

/** What the receiving peer gets: the payload without the target, plus who sent it. */
export type RelayedSdp = Omit<SdpMessage, 'targetUserId'> & { fromUserId: string };
export type RelayedIceCandidate = Omit<IceCandidateMessage, 'targetUserId'> & { fromUserId: string };
