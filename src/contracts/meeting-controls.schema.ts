// The host controls' wire contract (decision 900): the hub requests (and their REST bodies), their answer
// and the pushes they cause. Their part of the meeting actor's state and messages is in
// src/actors/meeting/meeting-controls.schema.ts.
import { z } from 'zod';
import { Id } from './common.schema.js';

/** Idempotency key of a host control: the same id within the de-duplication window applies once. */
export const ControlRequestId = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'must be a request id')
  .describe('Idempotency key: a retry with the same id applies once and answers the first result');

const requestId = ControlRequestId.optional();
const reason = z.string().trim().max(500).optional();

const removeFields = {
  userId: Id.describe('The member to take out of the meeting'),
  reason: reason.describe('Shown to the removed client and kept in the audit trail'),
  requestId,
};
/** removeParticipant: one member leaves the meeting and is barred until a host admits them again (decision 900). */
export const RemoveParticipantBody = z.object(removeFields);
export const RemoveParticipantRequest = z.object({ eventId: Id, ...removeFields });
export type RemoveParticipantRequest = z.infer<typeof RemoveParticipantRequest>;

const endFields = { reason: reason.describe('Kept in the audit trail and told to the members'), requestId };
/** endMeeting: for everyone; the VCS room is closed and the event ends. */
export const EndMeetingBody = z.object(endFields);
export const EndMeetingRequest = z.object({ eventId: Id, ...endFields });
export type EndMeetingRequest = z.infer<typeof EndMeetingRequest>;

/** lockMeeting / unlockMeeting. */
export const LockBody = z.object({ requestId });
export const LockRequest = z.object({ eventId: Id, requestId });
export type LockRequest = z.infer<typeof LockRequest>;

const hostFields = { userId: Id.describe('The member who becomes a host'), requestId };
/** transferHost (the caller stops being a host) and addHost (one more host). */
export const HostChangeBody = z.object(hostFields);
export const HostChangeRequest = z.object({ eventId: Id, ...hostFields });
export type HostChangeRequest = z.infer<typeof HostChangeRequest>;

const muteFields = {
  userId: Id.describe('The member whose client is asked to mute'),
  media: z.enum(['audio', 'video', 'both']).default('audio').describe('What to mute'),
  message: z.string().trim().max(500).optional().describe('Shown to the member'),
  requestId,
};
/** muteRequest: asks a member's client to mute (a push; the client mutes itself). */
export const MuteRequestBody = z.object(muteFields);
export const MuteRequestRequest = z.object({ eventId: Id, ...muteFields });
export type MuteRequestRequest = z.infer<typeof MuteRequestRequest>;

const answerFields = {
  userId: Id.describe('The member who asked for host access'),
  grant: z.boolean().describe('true: the requester becomes a host; false: refused'),
  message: z.string().trim().max(500).optional().describe('Shown to the requester'),
  requestId,
};
/** answerHostAccess: a host's answer to requestHostAccess. */
export const AnswerHostAccessBody = z.object(answerFields);
export const AnswerHostAccessRequest = z.object({ eventId: Id, ...answerFields });
export type AnswerHostAccessRequest = z.infer<typeof AnswerHostAccessRequest>;

/** The answer of every host control: the meeting's control state after it, and whom it acted on. */
export interface ControlResult {
  eventId: string;
  /** The meetingEvent sequence number after the control (clients order pushes by it). */
  seq: number;
  locked: boolean;
  ended: boolean;
  /** The hosts in the meeting now. */
  hosts: string[];
  /** The members in the meeting now. */
  members: string[];
  /** Whom the control acted on (empty when it changed nothing, e.g. a repeated lock). */
  affected: string[];
}

/** `removedFromMeeting` push to the removed user's sockets: why they are out, and how to come back. */
export interface RemovedPush {
  eventId: string;
  /** meeting_access_denied: joining again waits for a host (or is refused without a waiting room). */
  code: 'meeting_access_denied';
  by: string;
  at: string;
  reason?: string;
}

/** `muteRequested` push to the target's sockets. */
export interface MuteRequestedPush {
  eventId: string;
  by: string;
  media: 'audio' | 'video' | 'both';
  at: string;
  message?: string;
}

/** `hostAccess` push to the member who asked for host access: the host's answer. */
export interface HostAccessPush {
  eventId: string;
  state: 'granted' | 'refused';
  by: string;
  at: string;
  message?: string;
}
