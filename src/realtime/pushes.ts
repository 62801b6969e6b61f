import type { ErrorCode } from '../core/errors.js';
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

/** Server -> client pushes: the SPEC names plus the ones this service adds (docs/hub.md). */
export interface ServerToClientEvents {
  onNewCall(p: NewCallPush): void;
  onEndCall(p: EndCallPush): void;
  onCallUpdated(p: { call: CallInfo }): void;
  meetingEvent(p: MeetingEventPush): void;
  /** To a waiting client (its user room): its position, or admitted (with the join details), denied, expired. */
  waitingRoom(p: WaitingRoomPush): void;
  /** To the meeting's hosts: the waiting queue changed. */
  waitingRoomUpdated(p: WaitingRoomView): void;
  /** To a removed member's sockets (its user room): out of the meeting, coded meeting_access_denied (decision 900). */
  removedFromMeeting(p: RemovedPush): void;
  /** To a member's sockets: a host asks its client to mute. */
  muteRequested(p: MuteRequestedPush): void;
  /** To the member who asked for host access: granted or refused. */
  hostAccess(p: HostAccessPush): void;
  /** To each person present (their user room): a recording needs consent; `required` says whether their answer counts (decision 910). */
  recordingConsentRequested(p: ConsentAsk): void;
  /** To the requester and the hosts: the consent request was granted, refused (by whom) or timed out (who did not answer). */
  recordingConsentResult(p: RecordingConsentResultPush): void;
  userStatus(p: UserStatusPush): void;
  peripheralStarted(p: Record<string, unknown>): void;
  peripheralStopped(p: Record<string, unknown>): void;
  deviceInfo(p: DevicePush): void;
  deviceUpdated(p: DevicePush): void;
  onRemoteControl(p: RemoteControlPush): void;
  onDeviceAdded(p: { deviceId: string; eventId: string; addedBy: string; device: DevicePush }): void;
  onShareImage(p: Record<string, unknown>): void;
  onClearImage(p: { eventId: string; by: string }): void;
  offer(p: RelayedSdp): void;
  answer(p: RelayedSdp): void;
  iceCandidate(p: RelayedIceCandidate): void;
  sayHi(p: { roomId: string; from: { userId: string; username: string } }): void;
  /** The connection's session ended (expiry without refresh, sign-out, revocation); the socket is dropped next. */
  sessionEnded(p: { code: ErrorCode; message: string }): void;
  /** The user's role changed: the connection now holds these permissions. */
  permissionsChanged(p: { role: string; permissions: string[] }): void;
  /** PIN sign-in of this user was locked after failed attempts (docs/auth.md#device-pin-quick-unlock). */
  pinLocked(p: PinLockedPush): void;
  /** To every user who may reset PINs (`users:manage`): an account's PIN sign-in was hard-locked (docs/auth.md#device-pin-quick-unlock). */
  securityAlert(p: SecurityAlertPush): void;
  /** A pending-users import the user uploaded made progress, completed or failed (docs/onboarding.md). */
  importProgress(p: ImportProgressPush): void;
}

export type ServerEventName = keyof ServerToClientEvents;

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
];

/** A pushed message's name and payload type. */
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
}

/** A change of room membership for the sockets of some rooms (PushPublisher.move). */
export interface RoomMove {
  join?: string[];
  leave?: string[];
}
