// The meeting's wire contract: the hub requests (and their REST bodies), the acks, payloads and pushes a
// client receives. The meeting actor's state and messages are in src/actors/meeting/meeting.schema.ts.
import { z } from 'zod';
import { Id } from './common.schema.js';

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
  /** Content hash of an uploaded media file, or its media URL on this service (decision 1040). */
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
/**
 * The same rule for the OpenAPI document (a refinement has no JSON Schema form), so a client generated
 * from it, or a contract tester, knows that `userId` and `all: true` exclude each other.
 */
const ALL_TRUE = { required: ['all'], properties: { all: { const: true } } };
const ONE_OR_ALL_SCHEMA = {
  oneOf: [
    { required: ['userId'], not: ALL_TRUE },
    { ...ALL_TRUE, not: { required: ['userId'] } },
  ],
};

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
export const AdmitBody = z.object(admitFields).refine(oneOrAll, ONE_OR_ALL).meta(ONE_OR_ALL_SCHEMA);
export const AdmitRequest = z.object({ eventId: Id, ...admitFields }).refine(oneOrAll, ONE_OR_ALL);
export type AdmitRequest = z.infer<typeof AdmitRequest>;

/** deny: as admit, with an optional message shown to the denied client. */
export const DenyBody = z.object(denyFields).refine(oneOrAll, ONE_OR_ALL).meta(ONE_OR_ALL_SCHEMA);
export const DenyRequest = z.object({ eventId: Id, ...denyFields }).refine(oneOrAll, ONE_OR_ALL);
export type DenyRequest = z.infer<typeof DenyRequest>;

/** What hosts see of a waiting entry (MeetingDetails.waiting, waitingRoomUpdated, getWaitingRoom). */
export interface WaitingEntryView {
  userId: string;
  name: string;
  /** A person (patient, guest) or a headset. */
  kind: 'person' | 'device';
  role: 'participant' | 'guest' | 'device';
  invited: boolean;
  since: string;
  position: number;
  /** Denied or removed before: back in the queue only because the waiting room lets a host decide again. */
  returning?: 'denied' | 'removed';
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
  /** The tenant role (patient, clinician...): whom a patients-only consent policy asks (decision 910). */
  tenantRole?: string;
  /** A headset member: the device (actor) it speaks for; listed in the meeting's deviceIds while a member. */
  deviceId?: string;
}

/** The VCS room of a started meeting. */
export interface MeetingRoom {
  provider: string;
  roomName: string;
  url: string;
}

/** The meeting's recording: running or not, and who started it when. */
export interface MeetingRecording {
  active: boolean;
  startedAt?: string;
  startedBy?: string;
  stoppedAt?: string;
}

/** The image shared with the meeting (shareImage), and who shared it when. */
export interface SharedImage {
  image: ShareImageRequest['image'];
  caption?: string;
  by: string;
  at: string;
}

/** Whatever the meeting service returns for a join (MeetingData / JoinResponse); relayed as is. */
export interface MeetingData {
  eventId: string;
  room?: MeetingRoom;
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
  | 'hostAccessRefused'
  // Recording consent (decision 910)
  | ConsentMeetingEventType;

/** meetingEvent payload. */
export interface MeetingEventPush {
  eventId: string;
  /** The meeting actor's sequence number: every meetingEvent is a turn of the actor (decision 1090). */
  seq: number;
  type: MeetingEventType;
  at: string;
  by?: string;
  data?: Record<string, unknown>;
}

export interface MeetingDetails {
  eventId: string;
  started: boolean;
  room?: MeetingRoom;
  members: MeetingMember[];
  deviceIds: string[];
  recording: MeetingRecording;
  sharedImage?: SharedImage;
  seq: number;
  /** The waiting queue: shown to hosts only. */
  waiting?: WaitingEntryView[];
  /** Locked by a host: new joins wait or are refused (decision 900). */
  locked?: boolean;
  /** Ended for everyone. */
  ended?: boolean;
  /** The current or last recording consent request (decision 910). */
  recordingConsent?: ConsentView;
}

/**
 * Recording consent (decision 910): the tenant's policy. `off` records on request as before; `all`
 * asks every person present (headsets are equipment, never asked); `patients` asks the patients only.
 */
export const RECORDING_CONSENT_POLICIES = ['off', 'all', 'patients'] as const;
export type RecordingConsentPolicy = (typeof RECORDING_CONSENT_POLICIES)[number];

/** The tenant's consent settings, read when a recording is asked for and when someone joins a recorded meeting. */
export interface ConsentSettings {
  policy: RecordingConsentPolicy;
  timeoutSeconds: number;
}

/** startRecording: the request id makes a retried start open one consent request; `reason` is shown to those asked. */
export const StartRecordingRequest = z.object({
  eventId: Id,
  requestId: RequestId.optional().describe('Idempotency key: a retry with the same id opens one consent request'),
  reason: z.string().trim().max(300).optional().describe('Why the recording is made, shown to whoever is asked'),
});
export type StartRecordingRequest = z.infer<typeof StartRecordingRequest>;

export const StopRecordingRequest = z.object({
  eventId: Id,
  requestId: RequestId.optional().describe(
    'Idempotency key: a retry with the same id (its answer lost with a transport) answers what the first attempt did',
  ),
});
export type StopRecordingRequest = z.infer<typeof StopRecordingRequest>;

const consentFields = {
  requestId: RequestId.describe('The consent request answered (recordingConsentRequested.requestId)'),
  consent: z.boolean().describe('true: I agree to be recorded; false: I refuse'),
};
/** consentToRecording: the answer of one person to one consent request. REST takes the event from the path. */
export const ConsentAnswerBody = z.object(consentFields);
export const ConsentAnswerRequest = z.object({ eventId: Id, ...consentFields });
export type ConsentAnswerRequest = z.infer<typeof ConsentAnswerRequest>;

/** The text every consent request asks (stored with each answer as what was asked). */
export const CONSENT_QUESTION = 'Do you agree that this consultation is recorded?';

/** What a person is asked (`recordingConsentRequested` push, the held joiner's ack). */
export interface ConsentAsk {
  eventId: string;
  requestId: string;
  question: string;
  reason?: string;
  policy: Exclude<RecordingConsentPolicy, 'off'>;
  requestedBy: string;
  requestedAt: string;
  /** When an unanswered request is cancelled (ISO). */
  expiresAt: string;
  /** Whether this person's answer counts (everyone present is told; only these answer). */
  required: boolean;
  /** Asked because they joined while the recording runs: they enter the meeting once they agree. */
  late?: boolean;
}

/** One answer, as stored with the event and written to the audit trail: who, when, what was asked, the answer. */
export interface RecordingConsentAnswer {
  requestId: string;
  userId: string;
  username: string;
  /** The role in the meeting (host, participant, guest) and the tenant role (patient, clinician...). */
  role: string;
  tenantRole: string;
  question: string;
  reason?: string;
  policy: Exclude<RecordingConsentPolicy, 'off'>;
  requestedBy: string;
  requestedAt: string;
  consent: boolean;
  at: string;
  /** Given by joining while the recording ran; `implicit`: the requester's own request counts as consent. */
  late: boolean;
  implicit: boolean;
}

/** How a consent request ended. */
export type ConsentOutcome = 'granted' | 'refused' | 'timedOut';

/** The consent request as MeetingDetails, startRecording and consentToRecording show it. */
export interface ConsentView {
  requestId: string;
  state: 'pending' | 'granted' | 'refused' | 'timedOut';
  policy: Exclude<RecordingConsentPolicy, 'off'>;
  requestedBy: string;
  requestedAt: string;
  expiresAt: string;
  reason?: string;
  required: { userId: string; username: string; consent?: boolean; at?: string }[];
  /** Late joiners held until they agree. */
  held: { userId: string; username: string; since: string; requestId: string }[];
}

/** The ack of a join while a consented recording runs: the joiner is held until they answer. */
export interface ConsentRequiredAck {
  status: 'consentRequired';
  eventId: string;
  since: string;
  recordingConsent: ConsentAsk;
}

/** `recordingConsentResult` push to the requester and the hosts: how a request ended and who refused or did not answer. */
export interface RecordingConsentResultPush {
  eventId: string;
  requestId: string;
  outcome: ConsentOutcome;
  refusedBy: { userId: string; username: string }[];
  unanswered: { userId: string; username: string }[];
}

/** The meetingEvent types of the consent flow (docs/hub.md). */
export const CONSENT_MEETING_EVENTS = [
  'recordingConsentRequested',
  'recordingConsentAnswered',
  'recordingConsentGranted',
  'recordingConsentRefused',
  'recordingConsentTimedOut',
  'recordingConsentHeld',
  'recordingConsentHoldEnded',
] as const;
export type ConsentMeetingEventType = (typeof CONSENT_MEETING_EVENTS)[number];
