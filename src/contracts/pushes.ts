import type { ErrorCode } from '../kernel/errors.js';
import type { PinLockedPush, SecurityAlertPush } from '../core/pin.service.js';
import type { ImportProgressPush } from '../core/import.service.js';
import type { CallInfo, EndCallPush, NewCallPush } from '../actors/call.schema.js';
import type { HostAccessPush, MuteRequestedPush, RemovedPush } from '../actors/meeting-controls.schema.js';
import type {
  ConsentAsk,
  MeetingEventPush,
  RecordingConsentResultPush,
  WaitingRoomPush,
  WaitingRoomView,
} from '../actors/meeting.schema.js';
import type { DevicePush, RemoteControlPush } from '../actors/device.schema.js';
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

/**
 * How each push is delivered (the table of docs/hub.md#recovering-missed-pushes):
 * - `recoverable`: recorded in each recipient's history (user, device; a meeting room's pushes in the
 *   history of each recipient logically in the meeting) and replayed to a reconnecting client;
 * - `volatile`: presence ticks, heartbeats, signalling, progress ticks: stale by the time a client is back;
 * - `connection`: about one connection (its session, its resumption): a new connection learns the same anew.
 * importProgress is recoverable when it completes or fails, volatile while running.
 */
export const PUSH_DELIVERY: Record<PushName, 'recoverable' | 'volatile' | 'connection'> = {
  onNewCall: 'recoverable',
  onEndCall: 'recoverable',
  onCallUpdated: 'recoverable',
  meetingEvent: 'recoverable',
  waitingRoom: 'recoverable',
  waitingRoomUpdated: 'recoverable',
  removedFromMeeting: 'recoverable',
  muteRequested: 'recoverable',
  hostAccess: 'recoverable',
  recordingConsentRequested: 'recoverable',
  recordingConsentResult: 'recoverable',
  userStatus: 'volatile',
  peripheralStarted: 'recoverable',
  peripheralStopped: 'recoverable',
  deviceInfo: 'volatile',
  deviceUpdated: 'recoverable',
  onRemoteControl: 'recoverable',
  onDeviceAdded: 'recoverable',
  onShareImage: 'recoverable',
  onClearImage: 'recoverable',
  offer: 'volatile',
  answer: 'volatile',
  iceCandidate: 'volatile',
  sayHi: 'volatile',
  sessionEnded: 'connection',
  permissionsChanged: 'connection',
  pinLocked: 'recoverable',
  securityAlert: 'recoverable',
  importProgress: 'recoverable',
  resyncRequired: 'connection',
  pushStreams: 'connection',
};

/** Whether this push is recorded in its recipients' histories (PUSH_DELIVERY, with importProgress by status). */
export function isRecoverable(event: PushName, payload: unknown): boolean {
  if (PUSH_DELIVERY[event] !== 'recoverable') return false;
  if (event === 'importProgress') return (payload as { status?: string } | null)?.status !== 'running';
  return true;
}

export type PushName = ServerEventName;
export type PushPayload<E extends PushName> = Parameters<ServerToClientEvents[E]>[0];

export function isPushName(name: string): name is PushName {
  return (SERVER_EVENTS as readonly string[]).includes(name);
}

/**
 * Sends pushes to rooms (src/realtime/rooms.ts). At-most-once by nature: acknowledged work never relies
 * on a push arriving. Implemented by the hub (Socket.IO rooms through the adapter) and by the Redis push
 * channel (src/realtime/redis-publisher.ts) for processes that run no hub.
 */
export interface PushPublisher {
  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>): void;
  /**
   * Moves every socket in `rooms` (on every hub node) into `change.join` and out of `change.leave`:
   * how an actor turn admits a waiting client to its meeting room or takes a removed one out of it.
   * At-most-once like pushes, and sent in turn order with them. Optional for publishers that only push.
   */
  move?(rooms: string | string[], change: RoomMove): void;
  /**
   * Resolves once every push and move submitted so far was recorded (in the recipients' histories) and
   * handed on. An actor turn that pushed answers only after it: an acknowledged change's pushes are in
   * the histories before the caller hears of it, so a node killed right after the answer loses none.
   */
  idle?(): Promise<void>;
}

/** A change of room membership for the sockets of some rooms (PushPublisher.move). */
export interface RoomMove {
  join?: string[];
  leave?: string[];
}
