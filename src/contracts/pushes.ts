import type { ErrorCode } from '../kernel/errors.js';
import type { CallInfo, EndCallPush, NewCallPush } from './call.schema.js';
import type { HostAccessPush, MuteRequestedPush, RemovedPush } from './meeting-controls.schema.js';
import type {
  ConsentAsk,
  MeetingEventPush,
  RecordingConsentResultPush,
  WaitingRoomPush,
  WaitingRoomView,
} from './meeting.schema.js';
import type { DevicePush, RemoteControlPush } from './device.schema.js';
import type { RelayedIceCandidate, RelayedSdp } from './signalling.schema.js';

/**
 * Every message the service pushes to clients, with its payload type: the one map the hub's Socket.IO
 * server, the publishers (actors, telemetry completion, sign-in services, workers) and the client SDK use.
 */
export interface UserStatusPush {
  userId: string;
  online: boolean;
  at: string;
}

/** Payload of the hub push `pinLocked`, sent to every socket of the user whose PIN sign-in was locked. */
export interface PinLockedPush {
  /**
   * `source`: one client address is locked for `retryAfter` seconds; `account`: every address, for
   * `retryAfter` seconds or until the PIN is set again (after signing in by SSO or QR) or reset.
   */
  scope: 'source' | 'account';
  retryAfter?: number;
  at: string;
}

/** Payload of the hub push `securityAlert`, sent to every user of the tenant who may reset PINs (`users:manage`). */
export interface SecurityAlertPush {
  kind: 'pinLocked';
  userId: string;
  username: string;
  /** Seconds until the lock ends by itself. */
  retryAfter: number;
  failuresToday: number;
  at: string;
}

/** The `importProgress` push: a running import's counters, sent to the admin who uploaded it. */
export interface ImportProgressPush {
  importId: string;
  status: 'running' | 'completed' | 'failed';
  rowsDone: number;
  /** Rows of the sheet (counted before the rows are read), so a client can show "done of total"; the final push gives the rows read. */
  rowsTotal?: number;
  rowsImported: number;
  rowErrorCount: number;
  error?: string;
}

/**
 * A recoverable push's place in its recipient's history (docs/hub.md#recovering-missed-pushes): `stream` is
 * `u:<userId>` or `d:<deviceId>`, `epoch` the history's identity, `seq` its number (1, 2, 3... without gaps
 * within an epoch). A client hands its last position of each stream back when it reconnects.
 */
export interface PushPosition {
  stream: string;
  epoch: string;
  seq: number;
}

/** A recoverable push as delivered: its payload and, when the history recorded it, its position. */
export type Positioned<T> = T & { pos?: PushPosition };

/** `resyncRequired`: the pushes of `stream` after the client's position are not all recoverable. */
export interface ResyncRequiredPush {
  code: Extract<ErrorCode, 'resync_required'>;
  message: string;
  stream: string;
  /** Where the stream continues from: pushes with a greater `seq` in this epoch reach the connection. */
  position: PushPosition;
}

/** Server -> client pushes: the SPEC names plus the ones this service adds (docs/hub.md). */
export interface ServerToClientEvents {
  onNewCall(p: Positioned<NewCallPush>): void;
  onEndCall(p: Positioned<EndCallPush>): void;
  onCallUpdated(p: Positioned<{ call: CallInfo }>): void;
  meetingEvent(p: Positioned<MeetingEventPush>): void;
  /** To a waiting client (its user room): its position, or admitted (with the join details), denied, expired. */
  waitingRoom(p: Positioned<WaitingRoomPush>): void;
  /** To the meeting's hosts: the waiting queue changed. */
  waitingRoomUpdated(p: Positioned<WaitingRoomView>): void;
  /** To a removed member's sockets (its user room): out of the meeting, coded meeting_access_denied (decision 900). */
  removedFromMeeting(p: Positioned<RemovedPush>): void;
  /** To a member's sockets: a host asks its client to mute. */
  muteRequested(p: Positioned<MuteRequestedPush>): void;
  /** To the member who asked for host access: granted or refused. */
  hostAccess(p: Positioned<HostAccessPush>): void;
  /** To each person present (their user room): a recording needs consent; `required` says whether their answer counts (decision 910). */
  recordingConsentRequested(p: Positioned<ConsentAsk>): void;
  /** To the requester and the hosts: the consent request was granted, refused (by whom) or timed out (who did not answer). */
  recordingConsentResult(p: Positioned<RecordingConsentResultPush>): void;
  userStatus(p: UserStatusPush): void;
  peripheralStarted(p: Positioned<Record<string, unknown>>): void;
  peripheralStopped(p: Positioned<Record<string, unknown>>): void;
  deviceInfo(p: DevicePush): void;
  deviceUpdated(p: Positioned<DevicePush>): void;
  onRemoteControl(p: Positioned<RemoteControlPush>): void;
  onDeviceAdded(p: Positioned<{ deviceId: string; eventId: string; addedBy: string; device: DevicePush }>): void;
  onShareImage(p: Positioned<Record<string, unknown>>): void;
  onClearImage(p: Positioned<{ eventId: string; by: string }>): void;
  offer(p: RelayedSdp): void;
  answer(p: RelayedSdp): void;
  iceCandidate(p: RelayedIceCandidate): void;
  sayHi(p: { roomId: string; from: { userId: string; username: string } }): void;
  /** The connection's session ended (expiry without refresh, sign-out, revocation); the socket is dropped next. */
  sessionEnded(p: { code: ErrorCode; message: string }): void;
  /** The user's role changed: the connection now holds these permissions. */
  permissionsChanged(p: { role: string; permissions: string[] }): void;
  /**
   * The history could not give this connection every push it missed on `stream` (older than the window,
   * or the history was lost): resynchronise (getMeetingDetails and its `seq`, the call and waiting-room
   * state) and continue from `position`.
   */
  resyncRequired(p: ResyncRequiredPush): void;
  /** Sent once at connection, before any other push: the position each of the connection's streams continues from. */
  pushStreams(p: { positions: PushPosition[] }): void;
  /** PIN sign-in of this user was locked after failed attempts (docs/auth.md#device-pin-quick-unlock). */
  pinLocked(p: Positioned<PinLockedPush>): void;
  /** To every user who may reset PINs (`users:manage`): an account's PIN sign-in was hard-locked (docs/auth.md#device-pin-quick-unlock). */
  securityAlert(p: Positioned<SecurityAlertPush>): void;
  /** A pending-users import the user uploaded made progress, completed or failed (docs/onboarding.md). */
  importProgress(p: Positioned<ImportProgressPush>): void;
}

export type ServerEventName = keyof ServerToClientEvents;
/** A pushed message's name and payload type. */

/** Names actors may push (checked before a push leaves the publisher). */
export const SERVER_EVENTS: readonly ServerEventName[] = [
  'onNewCall',
  'onEndCall',
  'onCallUpdated',
  'meetingEvent',
  'waitingRoom',
  'waitingRoomUpdated',
  'removedFromMeeting',
  'muteRequested',
  'hostAccess',
  'recordingConsentRequested',
  'recordingConsentResult',
  'userStatus',
  'peripheralStarted',
  'peripheralStopped',
  'deviceInfo',
  'deviceUpdated',
  'onRemoteControl',
  'onDeviceAdded',
  'onShareImage',
  'onClearImage',
  'offer',
  'answer',
  'iceCandidate',
  'sayHi',
  'sessionEnded',
  'permissionsChanged',
  'pinLocked',
  'securityAlert',
  'importProgress',
  'resyncRequired',
  'pushStreams',
];

export type PushName = ServerEventName;
export type PushPayload<E extends PushName> = Parameters<ServerToClientEvents[E]>[0];

export function isPushName(name: string): name is PushName {
  return (SERVER_EVENTS as readonly string[]).includes(name);
}
