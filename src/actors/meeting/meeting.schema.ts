// The meeting actor's state and messages; what clients send and receive is in src/contracts/meeting.schema.ts.
import type { Caller } from '../../kernel/caller.js';
import type {
  ConsentOutcome,
  MeetingMember,
  MeetingRecording,
  MeetingRoom,
  RecordingConsentPolicy,
  ShareImageRequest,
  SharedImage,
  WaitingEntryView,
} from '../../contracts/meeting.schema.js';
import type { MeetingControlMsg, MeetingControlsState } from './meeting-controls.schema.js';
import type { EventCompletion } from '../../core/meetings/completion.service.js';

/** Someone waiting for admission; the caller is kept so the admission can hand out their own join details. */
export interface WaitingEntry {
  userId: string;
  username: string;
  kind: WaitingEntryView['kind'];
  role: WaitingEntryView['role'];
  /** On the event's participant list (or an attached device), as opposed to a guest by code. */
  invited: boolean;
  since: string;
  /** Epoch ms after which the entry expires (the waitingExpiry timer). */
  expiresAt: number;
  returning?: WaitingEntryView['returning'];
  /** Joined by meeting code: the admission hands out the JoinResponse of that code. */
  code?: string;
  /** A headset (initRapidConnect, addDeviceToEvent): its device, put in the meeting once it is a member. */
  device?: DeviceJoin;
  caller: Caller;
}

/**
 * A headset joining: the device actor it speaks for (its id, or the hardware id no one mapped) and
 * whether it attaches itself to the event (addDeviceToEvent) once it is in.
 */
export interface DeviceJoin {
  deviceId: string;
  attach?: boolean;
}

/** How a recording request came in (the audit trail names the transport; REST also the address). */
export interface RecordingVia {
  via?: 'hub' | 'rest';
  ip?: string;
}

export interface MeetingState extends MeetingControlsState {
  eventId: string;
  started: boolean;
  room?: MeetingRoom;
  members: Record<string, MeetingMember>;
  deviceIds: string[];
  recording: MeetingRecording;
  sharedImage?: SharedImage;
  /** Sequence number of the last meetingEvent, so clients can order and detect gaps. */
  seq: number;
  /** The waiting queue in arrival order (absent in snapshots written before the waiting room). */
  waiting?: WaitingEntry[];
  /** Denied or removed users: they join again only through the waiting room and a host's admission. */
  barred?: Record<string, { reason: 'denied' | 'removed'; by: string; at: string }>;
  /** Recording consent (decision 910); absent until a consent request is made. */
  consent?: ConsentState;
  /** The conference's completion (telemetry, decision 1090): the meeting is over; later deliveries change nothing. */
  completed?: { at: string; conferenceId: string };
}

export type MeetingMsg =
  | { type: 'init'; caller: Caller }
  /** joinEvent, join by code (REST, GraphQL), and a headset's initRapidConnect / addDeviceToEvent (`device`). */
  | { type: 'join'; caller: Caller; code?: string; device?: DeviceJoin }
  | { type: 'details'; caller: Caller }
  | { type: 'notify'; caller: Caller; action: string; data?: Record<string, unknown> }
  | ({ type: 'startRecording'; caller: Caller; requestId?: string; reason?: string } & RecordingVia)
  | ({ type: 'stopRecording'; caller: Caller } & RecordingVia)
  | { type: 'shareImage'; caller: Caller; req: ShareImageRequest }
  | { type: 'clearImage'; caller: Caller }
  | { type: 'requestHostAccess'; caller: Caller }
  | { type: 'isMember'; userId: string }
  | { type: 'admit'; caller: Caller; userId?: string; all?: boolean }
  | { type: 'deny'; caller: Caller; userId?: string; all?: boolean; message?: string }
  | { type: 'waitingRoom'; caller: Caller }
  /** The waiting client left (its socket disconnected, or it closed the waiting screen). */
  | { type: 'leaveWaiting'; caller: Caller }
  | { type: 'expireWaiting' }
  | { type: 'members' }
  /** The conference ended: its telemetry completes the meeting for everyone (decision 1090). */
  | { type: 'complete'; completion: EventCompletion }
  /** Host controls (src/actors/meeting/meeting-controls.ts, decision 900). */
  | MeetingControlMsg
  | ConsentMsg;

/** A pending or decided consent request of the meeting actor. */
export interface ConsentRequestState {
  requestId: string;
  requestedBy: string;
  requestedAt: string;
  /** Epoch ms after which an open request is cancelled. */
  expiresAt: number;
  policy: Exclude<RecordingConsentPolicy, 'off'>;
  reason?: string;
  /** Whose answer counts, with the name and roles they had when asked. */
  required: { userId: string; username: string; role: string; tenantRole: string }[];
  answers: Record<string, { consent: boolean; at: string }>;
  outcome?: ConsentOutcome;
  /** Who asked at the keyboard (an impersonator, an administrator acting for the requester) and how. */
  actorId?: string;
  via?: RecordingVia['via'];
  ip?: string;
}

/** Someone who joined while the recording runs, held out of the meeting until they agree. */
export interface ConsentHold {
  userId: string;
  username: string;
  requestId: string;
  since: string;
  expiresAt: number;
  /** The meeting role they will have, whether they go on to the waiting room, and the code they joined with. */
  role: 'participant' | 'guest' | 'device';
  thenWait: boolean;
  kind: 'person' | 'device';
  invited: boolean;
  waitExpirySeconds: number;
  code?: string;
  device?: DeviceJoin;
  caller: Caller;
}

/** The consent state of a meeting (snapshot): the current or last request, who agreed to the running recording, the held joiners. */
export interface ConsentState {
  request?: ConsentRequestState;
  /** Decided requests by id (newest last, bounded), so a repeated answer or start learns the outcome. */
  recent: { requestId: string; outcome: ConsentOutcome }[];
  /** Who agreed to the recording that runs now (user id -> when); emptied when it stops. */
  granted: Record<string, string>;
  holds: ConsentHold[];
}

/** Messages of the consent flow (part of MeetingMsg). */
export type ConsentMsg =
  | { type: 'consentToRecording'; caller: Caller; requestId: string; consent: boolean }
  /** The consent timer: cancels an unanswered request, releases expired holds. */
  | { type: 'consentTimeout' };
