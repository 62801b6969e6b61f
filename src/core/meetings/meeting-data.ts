import type { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { EventRecord } from '../../data/repositories/event.repository.js';
import type { DeviceRecord } from '../../data/repositories/device.repository.js';
import type { VcsJoinDetails, VcsParticipant } from '../../vcs/vcs.port.js';

/**
 * What meetings answer and read (MeetingService, the meeting actor, the presenters): a caller's role in a
 * meeting, the results of SPEC's initEvent, join by code and rapid connect, the tenant's meeting settings
 * and what an admission decides with.
 */
export type MeetingRole = 'host' | 'participant' | 'guest' | 'device';

/** Result of initEvent (SPEC MeetingData): the event's room and the caller's join details. */
export interface MeetingData {
  eventId: string;
  eventName: string;
  meetingCode: string;
  status: string;
  role: MeetingRole;
  join: VcsJoinDetails;
}

/** Result of joining by code (SPEC JoinResponse). */
export interface JoinResponse extends MeetingData {
  participant: VcsParticipant;
}

/** Who joins by code: a signed-in user (or device account), or an anonymous guest with a name. */
export type Joiner = { kind: 'principal'; principal: Principal } | { kind: 'guest'; displayName: string };

/** Result of startRapidConnect (SPEC RapidConnectUserInfo). */
export interface RapidConnectUserInfo extends MeetingData {
  device: DeviceRecord;
  host: { userId: string; displayName: string };
}

export interface MeetingFeatures {
  guestJoin: boolean;
  rapidConnect: boolean;
}

/** The tenant's waiting room settings (TenantConfig `meetings`). */
export interface WaitingRoomSettings {
  waitingRoom: boolean;
  waitingRoomAutoAdmitInvited: boolean;
  waitingRoomExpirySeconds: number;
}

/**
 * What the meeting actor needs to decide whether a joiner waits (decision 870): the joiner's role in
 * the event, whether the event invited them, and the waiting room policy (event override over tenant).
 */
export interface Admission {
  eventId: string;
  role: MeetingRole;
  /** A participant, organizer or attached device of the event (not a guest by code). */
  invited: boolean;
  waitingRoom: boolean;
  autoAdmitInvited: boolean;
  expirySeconds: number;
  /**
   * The event as this admission read it. The join of the same actor turn passes it back (joinDetails,
   * joinByCode) instead of reading the event again; it is never kept past the turn.
   */
  event?: EventRecord;
}

/** The caller's role in the event, or undefined when not part of it. */
export function roleOf(e: EventRecord, userId: Types.ObjectId): MeetingRole | undefined {
  if (e.organizerId.equals(userId)) return 'host';
  const p = e.participants.find((x) => x.userId.equals(userId));
  if (p) return p.role as MeetingRole;
  return e.deviceIds?.some((d) => d.equals(userId)) ? 'device' : undefined;
}
