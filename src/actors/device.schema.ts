// The device actor's state and messages; what clients send and receive is in src/contracts/device.schema.ts.
import type { Caller } from '../kernel/caller.js';
import type {
  DevicePush,
  HeadsetDeviceInfo,
  RemoteControlRequest,
  StartPeripheralRequest,
  StopPeripheralRequest,
} from '../contracts/device.schema.js';

export interface PeripheralState {
  peripheralId: string;
  peripheralType?: string;
  settings?: StartPeripheralRequest['settings'];
  startedBy: string;
  startedAt: string;
}

export interface DeviceState {
  deviceId: string;
  registered: boolean;
  /** The device service account that runs this headset. */
  accountId?: string;
  joinCode?: string;
  status: DevicePush['status'];
  info?: HeadsetDeviceInfo;
  lastHeartbeatAt?: string;
  meetingId?: string;
  controllerId?: string;
  peripherals: Record<string, PeripheralState>;
  commandSeq: number;
}

export type DeviceMsg =
  | { type: 'rapidConnect'; caller: Caller; joinCode: string }
  | { type: 'assignMeeting'; caller: Caller; eventId: string }
  /** The meeting actor took the headset out of its meeting (removed, the meeting ended). */
  | { type: 'leaveMeeting'; caller?: Caller; eventId: string }
  | { type: 'heartbeat'; caller: Caller; meetingId?: string | null; info: HeadsetDeviceInfo }
  | { type: 'offlineTimeout' }
  /** `member`: whether the caller joined the meeting (asked of the meeting actor by the hub). */
  | { type: 'startPeripheral'; caller: Caller; member: boolean; req: StartPeripheralRequest }
  | { type: 'stopPeripheral'; caller: Caller; member: boolean; req: StopPeripheralRequest }
  | { type: 'requestRemote'; caller: Caller; member: boolean; meetingId: string }
  | { type: 'remoteControl'; caller: Caller; member: boolean; meetingId: string; req: RemoteControlRequest }
  | { type: 'get' };
