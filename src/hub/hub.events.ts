import type { Server, Socket } from 'socket.io';
import type { ErrorCode, FieldError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { SocketRateLimit } from './socket-rate-limit.js';
import type {
  AcceptCallRequest,
  AddParticipantRequest,
  CallInfo,
  CallRef,
  InitCallRequest,
} from '../contracts/call.schema.js';
import type {
  AnswerHostAccessRequest,
  ControlResult,
  EndMeetingRequest,
  HostChangeRequest,
  LockRequest,
  MuteRequestRequest,
  RemoveParticipantRequest,
} from '../contracts/meeting-controls.schema.js';
import type {
  AdmitRequest,
  ConsentAnswerRequest,
  DenyRequest,
  StartRecordingRequest,
  StopRecordingRequest,
  InitEventRequest,
  JoinCallRequest,
  MeetingRef,
  NotifyRequest,
  ShareImageRequest,
} from '../contracts/meeting.schema.js';
import type {
  HeadsetDeviceInfo,
  RemoteControlRequest,
  StartPeripheralRequest,
  StopPeripheralRequest,
} from '../contracts/device.schema.js';
import type { IceCandidateMessage, SdpMessage } from '../contracts/signalling.schema.js';
import type { PushPosition, ServerToClientEvents } from '../contracts/pushes.js';

// The pushed messages are the realtime module's typed map; the hub serves it as Socket.IO's server events.
export {
  SERVER_EVENTS,
  type ServerEventName,
  type ServerToClientEvents,
  type UserStatusPush,
} from '../contracts/pushes.js';

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
  /** Records, or (tenant consent policy, decision 910) asks those present first; `requestId` makes a retry open one request. */
  startRecording(req: StartRecordingRequest, ack: Ack): void;
  /** Answers a recording consent request (recordingConsentRequested) with yes or no. */
  consentToRecording(req: ConsentAnswerRequest, ack: Ack): void;
  stopRecording(req: StopRecordingRequest, ack: Ack): void;
  startPeripheral(req: StartPeripheralRequest, ack: Ack): void;
  stopPeripheral(req: StopPeripheralRequest, ack: Ack): void;
  /** `meetingId` null (or absent) when the headset is in no meeting. */
  deviceStatus(meetingId: string | null | undefined, info: HeadsetDeviceInfo, ack: Ack): void;
  requestRemote(meetingId: string, deviceId: string, ack: Ack): void;
  requestHostAccess(req: MeetingRef, ack: Ack): void;
  remoteControl(meetingId: string, req: RemoteControlRequest, ack: Ack): void;
  shareImage(req: ShareImageRequest, ack: Ack): void;
  clearImage(req: MeetingRef, ack: Ack): void;
  /** Host: admit one waiting entry or all (decision 870). */
  admit(req: AdmitRequest, ack: Ack): void;
  /** Host: deny one waiting entry or all, with an optional message. */
  deny(req: DenyRequest, ack: Ack): void;
  /** Host: the waiting queue of a meeting. */
  getWaitingRoom(req: MeetingRef, ack: Ack): void;
  /** Host: takes a member out of the meeting; they come back only through a host's admission (decision 900). */
  removeParticipant(req: RemoveParticipantRequest, ack: Ack<ControlResult>): void;
  /** Host: ends the meeting for everyone (the VCS room closes, the event is `ended`). */
  endMeeting(req: EndMeetingRequest, ack: Ack<ControlResult>): void;
  /** Host: new joins wait (waiting room) or are refused with meeting_locked. */
  lockMeeting(req: LockRequest, ack: Ack<ControlResult>): void;
  unlockMeeting(req: LockRequest, ack: Ack<ControlResult>): void;
  /** Host: hands the host role to a member (the caller stops being a host here). */
  transferHost(req: HostChangeRequest, ack: Ack<ControlResult>): void;
  /** Host: makes a member one more host. */
  addHost(req: HostChangeRequest, ack: Ack<ControlResult>): void;
  /** Host: asks a member's client to mute (muteRequested push). */
  muteRequest(req: MuteRequestRequest, ack: Ack<ControlResult>): void;
  /** Host: grants or refuses a member's requestHostAccess (hostAccess push to the requester). */
  answerHostAccess(req: AnswerHostAccessRequest, ack: Ack<ControlResult>): void;
  /** Replaces the connection's access token with a newer one of the same user (docs/hub.md "Staying signed in"). */
  /** Replays the pushes of the connection's streams after these positions (docs/hub.md#recovering-missed-pushes). */
  resume(
    positions: { stream: string; epoch?: string; seq?: number }[],
    ack: Ack<{ positions: PushPosition[]; replayed: number }>,
  ): void;
  refreshToken(token: string, ack: Ack<{ expiresAt?: string; role: string; permissions: string[] }>): void;
}

export type HubMethodName = keyof ClientToServerEvents;

/** Server <-> server messages over the adapter (none beyond the adapter's own). */
export type InterServerEvents = Record<string, never>;

/** What the handshake establishes for a socket. */
export interface SocketData {
  tenant: string;
  principal: Principal;
  /** Set by initRapidConnect: the headset this socket speaks for (its one id: decision 312). */
  deviceId?: string;
  /** The hardware id the headset gave initRapidConnect (the same as deviceId when no one mapped it). */
  hardwareId?: string;
  /** Meetings whose waiting room this socket waits in: its disconnect leaves them (decision 870). */
  waitingIn?: string[];
  /** Meetings this socket asked to enter: leaving their room by disconnecting is audited. */
  meetingsEntered?: string[];
  /**
   * Rooms the directory policy adds (the tenant's presence room; for a patient limited to the care team,
   * tenant-patients and the presence rooms of the team instead); `null` when they could not be computed,
   * and then the tenant room is not joined either. Read once when the socket is admitted, then cleared.
   */
  directoryRooms?: string[] | null | undefined;
  /** Set when the socket's methods are served (serveMethods): the rate limit of its calls. */
  callLimit?: SocketRateLimit;
  /** Whether the socket's caller is a configured proxy address itself, so its calls' trace context counts. */
  traceTrusted?: boolean;
}

/** The hub's Socket.IO server and sockets, typed by the maps above. */
export type HubServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type HubSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
