import { z } from 'zod';
import { Id, type Caller } from './common.schema.js';

/** initEvent. */
export const InitEventRequest = z.object({ eventId: Id });
export type InitEventRequest = z.infer<typeof InitEventRequest>;

/** joinEvent / getMeetingDetails. */
export const JoinCallRequest = z.object({ eventId: Id });
export type JoinCallRequest = z.infer<typeof JoinCallRequest>;

/** Second argument of notify(action, NotifyRequest). */
export const NotifyAction = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'must be an action name');
export const NotifyRequest = z.object({
  eventId: Id,
  /** Free-form data relayed to the meeting; bounded so a client cannot flood it. */
  data: z
    .record(z.string(), z.unknown())
    .optional()
    .refine((d) => d === undefined || JSON.stringify(d).length <= 8192, 'data is larger than 8 KiB'),
});
export type NotifyRequest = z.infer<typeof NotifyRequest>;

/** startRecording / stopRecording / requestHostAccess / clearImage. */
export const MeetingRef = z.object({ eventId: Id });
export type MeetingRef = z.infer<typeof MeetingRef>;

export const ShareImageRequest = z.object({
  eventId: Id,
  /** Content hash of an uploaded media file, or an https URL the headset can fetch. */
  image: z.union([z.object({ hash: z.string().regex(/^[a-f0-9]{16,128}$/) }), z.object({ url: z.url().max(2048) })]),
  caption: z.string().max(500).optional(),
});
export type ShareImageRequest = z.infer<typeof ShareImageRequest>;

export interface MeetingMember {
  userId: string;
  username: string;
  /** The role in this meeting (the event's host, one of its participants, a guest, a headset), not the tenant role. */
  role: 'host' | 'participant' | 'guest' | 'device';
  joinedAt: string;
}

export interface MeetingState {
  eventId: string;
  started: boolean;
  room?: { provider: string; roomName: string; url: string };
  members: Record<string, MeetingMember>;
  deviceIds: string[];
  recording: { active: boolean; startedAt?: string; startedBy?: string; stoppedAt?: string };
  sharedImage?: { image: ShareImageRequest['image']; caption?: string; by: string; at: string };
  /** Sequence number of the last meetingEvent, so clients can order and detect gaps. */
  seq: number;
}

/** Whatever the meeting service returns for a join (MeetingData / JoinResponse); relayed as is. */
export interface MeetingData {
  eventId: string;
  room?: { provider: string; roomName: string; url: string };
  [k: string]: unknown;
}

/** meetingEvent payload. */
export interface MeetingEventPush {
  eventId: string;
  /** The meeting actor's sequence number; absent on the completion pushed by telemetry (not an actor turn). */
  seq?: number;
  type: string;
  at: string;
  by?: string;
  data?: Record<string, unknown>;
}

export type MeetingMsg =
  | { type: 'init'; caller: Caller }
  | { type: 'join'; caller: Caller }
  | { type: 'details'; caller: Caller }
  | { type: 'notify'; caller: Caller; action: string; data?: Record<string, unknown> }
  | { type: 'startRecording'; caller: Caller }
  | { type: 'stopRecording'; caller: Caller }
  | { type: 'shareImage'; caller: Caller; req: ShareImageRequest }
  | { type: 'clearImage'; caller: Caller }
  | { type: 'requestHostAccess'; caller: Caller }
  /** A headset proved the join code to the meeting service; it joins as a device, not a member. */
  | { type: 'addDevice'; caller: Caller; deviceId: string }
  | { type: 'isMember'; userId: string }
  | { type: 'members' };

export interface MeetingDetails {
  eventId: string;
  started: boolean;
  room?: MeetingState['room'];
  members: MeetingMember[];
  deviceIds: string[];
  recording: MeetingState['recording'];
  sharedImage?: MeetingState['sharedImage'];
  seq: number;
}
