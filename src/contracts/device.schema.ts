// The device's wire contract: the hub requests of headsets and of those who control them, and what they
// receive. The device actor's state and messages are in src/actors/device.schema.ts.
import { z } from 'zod';
import { Id } from './common.schema.js';

/** initRapidConnect(uniqueId, joinCode): the headset's hardware id and the code it displays. */
export const UniqueId = Id;
export const JoinCode = z
  .string()
  .trim()
  .min(4)
  .max(32)
  .regex(/^[A-Za-z0-9-]+$/, 'must be letters, digits or dashes');

/** Second argument of deviceStatus(meetingId, HeadsetDeviceInfo). */
export const HeadsetDeviceInfo = z.object({
  deviceId: Id,
  batteryLevel: z.number().min(0).max(100).optional(),
  charging: z.boolean().optional(),
  network: z.string().max(64).optional(),
  signalStrength: z.number().min(-200).max(100).optional(),
  appVersion: z.string().max(64).optional(),
  osVersion: z.string().max(64).optional(),
  model: z.string().max(128).optional(),
  inMeeting: z.boolean().optional(),
  camera: z.enum(['on', 'off']).optional(),
  microphone: z.enum(['on', 'off']).optional(),
  extra: z.record(z.string(), z.union([z.string().max(256), z.number(), z.boolean()])).optional(),
});
export type HeadsetDeviceInfo = z.infer<typeof HeadsetDeviceInfo>;

/** deviceStatus's meetingId: null or absent when the headset is not in a meeting. */
export const OptionalMeetingId = Id.nullable().optional();

export const StartPeripheralRequest = z.object({
  eventId: Id,
  deviceId: Id,
  peripheralId: Id,
  peripheralType: z.string().max(64).optional(),
  settings: z.record(z.string(), z.union([z.string().max(256), z.number(), z.boolean()])).optional(),
});
export type StartPeripheralRequest = z.infer<typeof StartPeripheralRequest>;

export const StopPeripheralRequest = z.object({ eventId: Id, deviceId: Id, peripheralId: Id });
export type StopPeripheralRequest = z.infer<typeof StopPeripheralRequest>;

/** Second argument of remoteControl(meetingId, RemoteControlRequest). */
export const RemoteControlRequest = z.object({
  deviceId: Id,
  command: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._:-]+$/, 'must be a command name'),
  params: z.record(z.string(), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()])).optional(),
});
export type RemoteControlRequest = z.infer<typeof RemoteControlRequest>;

/** What initRapidConnect answers. */
export interface RapidConnectUserInfo {
  deviceId: string;
  joinCode: string;
  userId: string;
  username: string;
  tenant: string;
  meetingId?: string;
  heartbeatIntervalMs: number;
}

/** deviceInfo / deviceUpdated payload. */
export interface DevicePush {
  deviceId: string;
  status: 'online' | 'offline';
  meetingId?: string;
  info?: HeadsetDeviceInfo;
  lastHeartbeatAt?: string;
}

/** onRemoteControl payload. */
export interface RemoteControlPush {
  deviceId: string;
  meetingId: string;
  commandId: string;
  command: string;
  params?: RemoteControlRequest['params'];
  from: string;
}
