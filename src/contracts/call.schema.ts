// The call's wire contract: the hub requests, the call clients receive and the pushes about it. The call
// actor's state and messages are in src/actors/call.schema.ts.
import { z } from 'zod';
import { Id, ObjectIdString } from './common.schema.js';

/** initCall: the caller names who to ring; `callId` lets a retrying client stay idempotent. */
export const InitCallRequest = z.object({
  callId: z.uuid().optional(),
  calleeIds: z.array(ObjectIdString).min(1).max(16),
  callType: z.enum(['audio', 'video']).default('video'),
  eventId: Id.optional(),
});
export type InitCallRequest = z.infer<typeof InitCallRequest>;

export const AcceptCallRequest = z.object({ callId: z.uuid() });
export type AcceptCallRequest = z.infer<typeof AcceptCallRequest>;

/** cancelCall / endCall. */
export const CallRef = z.object({ callId: z.uuid(), reason: z.string().max(200).optional() });
export type CallRef = z.infer<typeof CallRef>;

export const AddParticipantRequest = z.object({ callId: z.uuid(), userId: ObjectIdString });
export type AddParticipantRequest = z.infer<typeof AddParticipantRequest>;

export const CALL_STATUSES = ['idle', 'ringing', 'active', 'ended', 'missed', 'cancelled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** A call as clients receive it (onNewCall, onCallUpdated); also the call actor's state. */
export interface CallInfo {
  callId: string;
  status: CallStatus;
  callType: 'audio' | 'video';
  callerId: string;
  callerName: string;
  eventId?: string;
  /** Everyone invited (callees and added participants). */
  invitedIds: string[];
  /** Who is in the call now (the caller and those who accepted). */
  joinedIds: string[];
  startedAt?: string;
  answeredAt?: string;
  endedAt?: string;
  endReason?: string;
}

/** onNewCall payload. */
export interface NewCallPush {
  call: CallInfo;
}

/** onEndCall payload. */
export interface EndCallPush {
  callId: string;
  status: CallStatus;
  reason: string;
  endedBy?: string;
}
