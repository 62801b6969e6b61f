import { z } from 'zod';
import { Id, type Caller } from './common.schema.js';
import type { MeetingControlMsg, MeetingControlsState } from './meeting-controls.schema.js';

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

/** Idempotency key of a host control: the same id within the de-duplication window applies once. */
export const RequestId = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'must be a request id');

const oneOrAll = (r: { userId?: string; all?: boolean }) => (r.all === true) !== (r.userId !== undefined);
const ONE_OR_ALL = { message: 'give either userId or all: true', path: ['userId'] };

const admitFields = {
  userId: Id.optional().describe('The waiting user to act on'),
  all: z.boolean().optional().describe('Act on every waiting entry'),
  requestId: RequestId.optional().describe('Idempotency key: a retry with the same id applies once'),
};
const denyFields = {
  ...admitFields,
  message: z.string().trim().max(500).optional().describe('Shown to the denied client'),
};

/** admit: one waiting entry (userId) or every one (all: true). REST takes the event from the path. */
export const AdmitBody = z.object(admitFields).refine(oneOrAll, ONE_OR_ALL);
export const AdmitRequest = z.object({ eventId: Id, ...admitFields }).refine(oneOrAll, ONE_OR_ALL);
export type AdmitRequest = z.infer<typeof AdmitRequest>;

/** deny: as admit, with an optional message shown to the denied client. */
export const DenyBody = z.object(denyFields).refine(oneOrAll, ONE_OR_ALL);
export const DenyRequest = z.object({ eventId: Id, ...denyFields }).refine(oneOrAll, ONE_OR_ALL);
export type DenyRequest = z.infer<typeof DenyRequest>;

/** Someone waiting for admission; the caller is kept so the admission can hand out their own join details. */
export interface WaitingEntry {
  userId: string;
  username: string;
  /** A person (patient, guest) or a headset. */
  kind: 'person' | 'device';
  role: 'participant' | 'guest' | 'device';
  /** On the event's participant list (or an attached device), as opposed to a guest by code. */
  invited: boolean;
  since: string;
  /** Epoch ms after which the entry expires (the waitingExpiry timer). */
  expiresAt: number;
  /** Denied or removed before: back in the queue only because the waiting room lets a host decide again. */
  returning?: 'denied' | 'removed';
  /** Joined by meeting code: the admission hands out the JoinResponse of that code. */
  code?: string;
  caller: Caller;
}

/** What hosts see of a waiting entry (MeetingDetails.waiting, waitingRoomUpdated, getWaitingRoom). */
export interface WaitingEntryView {
  userId: string;
  name: string;
  kind: WaitingEntry['kind'];
  role: WaitingEntry['role'];
  invited: boolean;
  since: string;
  position: number;
  returning?: WaitingEntry['returning'];
}

/** The waiting room as a host sees it. */
export interface WaitingRoomView {
  eventId: string;
  waiting: WaitingEntryView[];
}

/** `waitingRoom` push to the waiting client (its user room): its position or what became of it. */
export interface WaitingRoomPush {
  eventId: string;
  /** `ended`: the meeting was ended for everyone while waiting (decision 900). */
  state: 'waiting' | 'admitted' | 'denied' | 'expired' | 'left' | 'ended';
  position?: number;
  since?: string;
  message?: string;
  /** On admission: the MeetingData / JoinResponse the client would have had, with the meeting details. */
  meeting?: Record<string, unknown>;
}

/** The ack of a join that must wait (joinEvent, join by code). */
export interface WaitingAck {
  status: 'waiting';
  eventId: string;
  position: number;
  since: string;
}

export interface MeetingMember {
  userId: string;
  username: string;
  /** The role in this meeting (the event's host, one of its participants, a guest, a headset), not the tenant role. */
  role: 'host' | 'participant' | 'guest' | 'device';
  joinedAt: string;
  /** The member's permissions let them host (meetings:host): addHost, transferHost and host access need it. */
  canHost?: boolean;
}

export interface MeetingState extends MeetingControlsState {
  eventId: string;
  started: boolean;
  room?: { provider: string; roomName: string; url: string };
  members: Record<string, MeetingMember>;
  deviceIds: string[];
  recording: { active: boolean; startedAt?: string; startedBy?: string; stoppedAt?: string };
  sharedImage?: { image: ShareImageRequest['image']; caption?: string; by: string; at: string };
  /** Sequence number of the last meetingEvent, so clients can order and detect gaps. */
  seq: number;
  /** The waiting queue in arrival order (absent in snapshots written before the waiting room). */
  waiting?: WaitingEntry[];
  /** Denied or removed users: they join again only through the waiting room and a host's admission. */
  barred?: Record<string, { reason: 'denied' | 'removed'; by: string; at: string }>;
}

/** Whatever the meeting service returns for a join (MeetingData / JoinResponse); relayed as is. */
export interface MeetingData {
  eventId: string;
  room?: { provider: string; roomName: string; url: string };
  [k: string]: unknown;
}

/** The `type` of a meetingEvent (docs/hub.md); the host controls' types are decision 900's. */
export type MeetingEventType =
  | 'meetingStarted'
  | 'participantJoined'
  | 'participantWaiting'
  | 'participantAdmitted'
  | 'participantDenied'
  | 'waitingLeft'
  | 'waitingExpired'
  | 'notify'
  | 'recordingStarted'
  | 'recordingStopped'
  | 'imageShared'
  | 'imageCleared'
  | 'hostAccessRequested'
  | 'deviceAdded'
  | 'meetingCompleted'
  // Host controls (decision 900)
  | 'participantRemoved'
  | 'meetingEnded'
  | 'meetingLocked'
  | 'meetingUnlocked'
  | 'hostTransferred'
  | 'hostAdded'
  | 'muteRequested'
  | 'hostAccessGranted'
  | 'hostAccessRefused';

/** meetingEvent payload. */
export interface MeetingEventPush {
  eventId: string;
  /** The meeting actor's sequence number; absent on the completion pushed by telemetry (not an actor turn). */
  seq?: number;
  type: MeetingEventType;
  at: string;
  by?: string;
  data?: Record<string, unknown>;
}

export type MeetingMsg =
  | { type: 'init'; caller: Caller }
  | { type: 'join'; caller: Caller; code?: string }
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
  | { type: 'admit'; caller: Caller; userId?: string; all?: boolean }
  | { type: 'deny'; caller: Caller; userId?: string; all?: boolean; message?: string }
  | { type: 'waitingRoom'; caller: Caller }
  /** The waiting client left (its socket disconnected, or it closed the waiting screen). */
  | { type: 'leaveWaiting'; caller: Caller }
  | { type: 'expireWaiting' }
  | { type: 'members' }
  /** Host controls (src/actors/meeting-controls.ts, decision 900). */
  | MeetingControlMsg;

export interface MeetingDetails {
  eventId: string;
  started: boolean;
  room?: MeetingState['room'];
  members: MeetingMember[];
  deviceIds: string[];
  recording: MeetingState['recording'];
  sharedImage?: MeetingState['sharedImage'];
  seq: number;
  /** The waiting queue: shown to hosts only. */
  waiting?: WaitingEntryView[];
  /** Locked by a host: new joins wait or are refused (decision 900). */
  locked?: boolean;
  /** Ended for everyone. */
  ended?: boolean;
}
