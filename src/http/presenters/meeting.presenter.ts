import { z } from 'zod';
import type {
  JoinResponse as JoinResponseData,
  MeetingData as MeetingDataRecord,
  RapidConnectUserInfo as RapidConnectData,
} from '../../core/meetings/meeting-data.js';
import { DeviceInfo, presentDevice } from './peripheral.presenter.js';
import { ConsentRequiredAck } from './recording-consent.presenter.js';

const JoinDetails = z.object({
  provider: z.string(),
  roomName: z.string(),
  url: z.string().describe('Where the client connects (the video conferencing server)'),
  token: z.string().describe('Join token for this participant'),
  expiresAt: z.string(),
});

/** MeetingData (result of initEvent), also the base of JoinResponse and RapidConnectUserInfo. */
export const MeetingData = z.object({
  eventId: z.string(),
  eventName: z.string(),
  meetingCode: z.string(),
  status: z.string(),
  role: z.enum(['host', 'participant', 'guest', 'device']),
  join: JoinDetails,
});

export const JoinResponse = MeetingData.extend({
  participant: z.object({
    identity: z.string(),
    name: z.string(),
    role: z.enum(['host', 'participant', 'guest', 'device']),
  }),
});

export const RapidConnectUserInfo = MeetingData.extend({
  device: DeviceInfo,
  host: z.object({ userId: z.string(), displayName: z.string() }),
});

export function presentMeetingData(m: MeetingDataRecord): z.infer<typeof MeetingData> {
  const { provider, roomName, url, token, expiresAt } = m.join;
  return {
    eventId: m.eventId,
    eventName: m.eventName,
    meetingCode: m.meetingCode,
    status: m.status,
    role: m.role,
    join: { provider, roomName, url, token, expiresAt },
  };
}

export function presentJoinResponse(j: JoinResponseData): z.infer<typeof JoinResponse> {
  return {
    ...presentMeetingData(j),
    participant: { identity: j.participant.identity, name: j.participant.name, role: j.participant.role },
  };
}

export function presentRapidConnect(r: RapidConnectData): z.infer<typeof RapidConnectUserInfo> {
  return { ...presentMeetingData(r), device: presentDevice({ device: r.device, type: undefined }), host: r.host };
}

/** The ack of a join that must wait for a host (decision 870). */
export const WaitingAck = z.object({
  status: z.literal('waiting'),
  eventId: z.string(),
  position: z.number().int().describe('1 = next to be admitted'),
  since: z.string(),
});

/**
 * Join by code: the JoinResponse, `waiting` when the meeting's waiting room holds the caller, or
 * `consentRequired` when a recording runs that needs the joiner's consent first (decision 910).
 */
export const JoinOrWait = z.union([JoinResponse, WaitingAck, ConsentRequiredAck]);

export function presentJoinOrWait(r: Record<string, unknown>): z.infer<typeof JoinOrWait> {
  if (r.status === 'waiting') return WaitingAck.parse(r);
  if (r.status === 'consentRequired') return ConsentRequiredAck.parse(r);
  return presentJoinResponse(r as unknown as JoinResponseData);
}

const WaitingEntry = z.object({
  userId: z.string(),
  name: z.string(),
  kind: z.enum(['person', 'device']),
  role: z.enum(['participant', 'guest', 'device']),
  invited: z.boolean().describe("On the event's participant list, as opposed to a guest by code"),
  since: z.string(),
  position: z.number().int(),
  returning: z.enum(['denied', 'removed']).optional().describe('Denied or removed before'),
});

/** The waiting queue as a host sees it. */
export const WaitingRoom = z.object({ eventId: z.string(), waiting: z.array(WaitingEntry) });
export const AdmitResult = WaitingRoom.extend({
  admitted: z.array(z.string()),
  held: z
    .array(z.string())
    .optional()
    .describe('Admitted while a consented recording runs, held until they agree to it (decision 910)'),
});
export const DenyResult = WaitingRoom.extend({ denied: z.array(z.string()) });

/** The answer of every host control (decision 900): the meeting's control state after it. */
export const ControlResultSchema = z.object({
  eventId: z.string(),
  seq: z.number().int().describe('The meetingEvent sequence number after the control'),
  locked: z.boolean(),
  ended: z.boolean(),
  hosts: z.array(z.string()).describe('Hosts in the meeting now'),
  members: z.array(z.string()).describe('Members in the meeting now'),
  affected: z
    .array(z.string())
    .describe('Whom the control acted on (the event id for lock/unlock); empty when it changed nothing'),
});
