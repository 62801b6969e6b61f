import type { ActorSystem } from '../actors/runtime/types.js';
import type { Principal } from '../kernel/principal.js';
import type { AuditService } from '../core/audit/audit.service.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { FollowUps } from './follow-ups.js';
import type { PushHistory } from '../realtime/push-history.js';
import type { SocketSessions } from './hub.session.js';
import type { HubServer } from './hub.events.js';
import type { OwnMediaOrigin } from '../core/media/share-image.js';

export type { HubServer, HubSocket } from './hub.events.js';

/** The meeting service calls the hub needs (the directory's MeetingService satisfies it). */
export interface HubMeetings {
  /** The event a join code opens (meeting_not_found otherwise); the join itself is the meeting actor's. */
  eventIdForCode(tenant: string, meetingCode: string): Promise<string>;
  /** Organizer, participant or attached device of the event: the members of its room (joinRoom / sayHiToRoom). */
  isParticipant(tenant: string, eventId: string, userId: string): Promise<boolean>;
  /** A participant's connection to the meeting ended: recorded as the leave (docs/audit.md). */
  left(p: Principal, eventId: string, reason: 'disconnect'): Promise<void>;
}

/** What the hub needs to resume pushes: the history and a way to know a room's channel is subscribed. */
export interface HubStreams {
  history: PushHistory;
  /** Resolves once this node receives what is published to these rooms (the adapter's subscriptions are active). */
  subscribed(rooms: string[]): Promise<void>;
}

/** What handlers reach: the socket server, the actor system and a few services. */
export interface HubContext {
  io: HubServer;
  actors: Pick<ActorSystem, 'ask'>;
  meetings: HubMeetings;
  /** The media access rule (core/media-access.ts): whether the caller may read (and so share) content by hash. */
  canReadMedia(principal: Principal, hash: string): Promise<boolean>;
  /** A device's id or one of its hardware ids -> the one id its actor, rooms and pushes use (decision 312). */
  resolveDevice(tenant: string, id: string): Promise<string>;
  /** Refuses `forbidden` unless a hardware id (any of `ids`) is registered to the caller's device account (decision 1041). */
  assertDeviceClaim(principal: Principal, ids: readonly string[]): Promise<void>;
  /**
   * The directory's rooms of a socket: the tenant's presence room for who may see everyone; a patient
   * limited to the care team joins the presence rooms of its members instead.
   */
  directoryRooms(principal: Principal): Promise<string[]>;
  /** Where the tenant's own media is served: the only URLs shareImage puts on a headset (decision 1040). */
  ownMedia(tenant: string): OwnMediaOrigin;
  /** Grants the event's members (its headsets included) read access to content shared into it by hash. */
  shareMediaToEvent(principal: Principal, eventId: string, hash: string): Promise<void>;
  logger: Logger;
  metrics: Metrics;
  /** Expiry, refresh, revocation and role changes of live sockets. */
  sessions: SocketSessions;
  /** The tenant's audit trail: every method called while impersonating is recorded (docs/audit.md). */
  audit?: Pick<AuditService, 'record'>;
  /** Push histories: resumption at connection and `resume`, meeting rosters (absent: pushes at-most-once). */
  streams?: HubStreams;
  /** Work a socket's disconnect leaves to do, waited for by the hub's stop (and by `settled()`). */
  followUps: FollowUps;
}
