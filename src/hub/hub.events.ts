import type { ErrorCode, FieldError } from '../core/errors.js';
import type { Principal } from '../auth/principal.js';
import type { PinLockedPush } from '../core/pin.service.js';
import type { AcceptCallRequest, AddParticipantRequest, CallInfo, CallRef, EndCallPush, InitCallRequest, NewCallPush } from '../actors/call.schema.js';
import type { InitEventRequest, JoinCallRequest, MeetingEventPush, MeetingRef, NotifyRequest, ShareImageRequest } from '../actors/meeting.schema.js';
import type { DevicePush, HeadsetDeviceInfo, RemoteControlPush, RemoteControlRequest, StartPeripheralRequest, StopPeripheralRequest } from '../actors/device.schema.js';
import type { IceCandidateMessage, RelayedIceCandidate, RelayedSdp, SdpMessage } from './signalling.schema.js';

/** Every client method is answered with this acknowledgement; errors carry the REST error codes. */
export type AckResult<T = unknown> =
  | { ok: true; data: T }
  | { ok: false; error: { code: ErrorCode; message: string; errors?: FieldError[]; retryAfter?: number } };
export type Ack<T = unknown> = (result: AckResult<T>) => void;

/**
 * Client -> server methods (the SPEC hub table). Arguments are positional where the SPEC lists
 * several (notify(action, NotifyRequest), deviceStatus(meetingId, HeadsetDeviceInfo), ...); the last
 * argument is always the acknowledgement callback.
 */
export interface ClientToServerEvents {
  initEvent(req: InitEventRequest, ack: Ack): void;
  joinEvent(req: JoinCallRequest, ack: Ack): void;
  getMeetingDetails(req: JoinCallRequest, ack: Ack): void;
  initCall(req: InitCallRequest, ack: Ack<CallInfo>): void;
  acceptCall(req: AcceptCallRequest, ack: Ack<CallInfo>): void;
  cancelCall(req: CallRef, ack: Ack<CallInfo>): void;
  endCall(req: CallRef, ack: Ack<CallInfo>): void;
  addParticipant(req: AddParticipantRequest, ack: Ack<CallInfo>): void;
  joinRoom(roomId: string, ack: Ack): void;
  sayHiToRoom(roomId: string, ack: Ack): void;
  initRapidConnect(uniqueId: string, joinCode: string, ack: Ack): void;
  addDeviceToEvent(joinCode: string, eventId: string, ack: Ack): void;
  notify(action: string, req: NotifyRequest, ack: Ack): void;
  offer(msg: SdpMessage, ack: Ack): void;
  answer(msg: SdpMessage, ack: Ack): void;
  iceCandidate(msg: IceCandidateMessage, ack: Ack): void;
  startRecording(req: MeetingRef, ack: Ack): void;
  stopRecording(req: MeetingRef, ack: Ack): void;
  startPeripheral(req: StartPeripheralRequest, ack: Ack): void;
  stopPeripheral(req: StopPeripheralRequest, ack: Ack): void;
  deviceStatus(meetingId: string | null, info: HeadsetDeviceInfo, ack: Ack): void;
  requestRemote(meetingId: string, deviceId: string, ack: Ack): void;
  requestHostAccess(req: MeetingRef, ack: Ack): void;
  remoteControl(meetingId: string, req: RemoteControlRequest, ack: Ack): void;
  shareImage(req: ShareImageRequest, ack: Ack): void;
  clearImage(req: MeetingRef, ack: Ack): void;
  /** Replaces the connection's access token with a newer one of the same user (docs/hub.md "Staying signed in"). */
  refreshToken(token: string, ack: Ack<{ expiresAt?: string; role: string; permissions: string[] }>): void;
}

export type HubMethodName = keyof ClientToServerEvents;

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
}

export type ServerEventName = keyof ServerToClientEvents;

/** Names actors may push (checked before a push leaves the publisher). */
export const SERVER_EVENTS: readonly ServerEventName[] = [
  'onNewCall', 'onEndCall', 'onCallUpdated', 'meetingEvent', 'userStatus', 'peripheralStarted', 'peripheralStopped',
  'deviceInfo', 'deviceUpdated', 'onRemoteControl', 'onDeviceAdded', 'onShareImage', 'onClearImage', 'offer', 'answer',
  'iceCandidate', 'sayHi', 'sessionEnded', 'permissionsChanged', 'pinLocked',
];

/** Server <-> server messages over the adapter (none beyond the adapter's own). */
export type InterServerEvents = Record<string, never>;

/** What the handshake establishes for a socket. */
export interface SocketData {
  tenant: string;
  principal: Principal;
  /** Set by initRapidConnect: the headset this socket speaks for. */
  deviceId?: string;
  /**
   * Rooms the directory policy adds (a patient limited to the care team: tenant-patients and the presence
   * rooms of the team); `null` when they could not be computed, and then the tenant room is not joined.
   */
  directoryRooms?: string[] | null;
}
