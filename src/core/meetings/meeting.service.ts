import { randomUUID } from 'node:crypto';
import type { Principal } from '../../kernel/principal.js';
import type { EventRecord, EventRepository } from '../../data/repositories/event.repository.js';
import type { UserRepository } from '../../data/repositories/user.repository.js';
import type { DeviceRepository } from '../../data/repositories/device.repository.js';
import type { VcsParticipant, VcsRoom, VideoConferencing } from '../../vcs/vcs.port.js';
import { AppError } from '../../kernel/errors.js';
import { isObjectIdString, oid } from '../../kernel/object-id.js';
import { meetingEndOf, sourcesOf, type EventStatus, type MeetingEnd } from './event-status.js';
import {
  roleOf,
  type Admission,
  type Joiner,
  type JoinResponse,
  type MeetingData,
  type MeetingFeatures,
  type MeetingRole,
  type RapidConnectUserInfo,
  type WaitingRoomSettings,
} from './meeting-data.js';
import { constantTimeEqual } from '../../kernel/secrets.js';
import { newMeetingCode } from './event.service.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { consultationData } from '../webhooks/consultation-events.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';

export interface MeetingDeps {
  events: (tenant: string) => EventRepository;
  users: (tenant: string) => Pick<UserRepository, 'findById'>;
  devices: (tenant: string) => Pick<DeviceRepository, 'findAvailable'>;
  /** A device's id or one of its hardware ids -> its id (PeripheralService.resolveDeviceId, decision 312). */
  resolveDevice: (tenant: string, id: string) => Promise<string>;
  features: (tenant: string) => Promise<MeetingFeatures>;
  meetingSettings: (tenant: string) => Promise<WaitingRoomSettings>;
  /** Resolved at call time: the adapter is wired by the video conferencing capability. */
  vcs: () => VideoConferencing;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: meeting start, every join and leave (docs/audit.md). */
  audit?: AuditRecorder;
}

const JOINABLE = ['scheduled', 'started'] as const;

/** How many started events a node keeps for the joins of held members (MeetingService.started). */
const STARTED_KEPT = 1024;

/**
 * Meetings: the live side of an event. initEvent assigns the room through the video conferencing
 * port and moves the event scheduled -> started; joins hand out per-participant join details.
 * Used by REST (join by code, rapid connect) and by the hub (initEvent, joinEvent, addDeviceToEvent).
 */
export class MeetingService {
  /**
   * Started events as joins read them, by tenant and id (the most recent STARTED_KEPT), for the joins of
   * members their meeting holds (joinDetails' `held`): while started an event cannot be edited, and its end
   * is the meeting actor's own state, which refuses a join before it asks here.
   */
  private readonly started = new Map<string, EventRecord>();

  constructor(private readonly deps: MeetingDeps) {}

  /** Organizer, participant or attached device of the event. */
  async isParticipant(tenant: string, eventId: string, userId: string): Promise<boolean> {
    if (!isObjectIdString(eventId) || !isObjectIdString(userId)) return false;
    return !!(await this.deps.events(tenant).findVisible(oid(eventId), oid(userId)));
  }

  /** A host of the event: its organizer or a participant with the host role. */
  async isHost(tenant: string, eventId: string, userId: string): Promise<boolean> {
    if (!isObjectIdString(eventId) || !isObjectIdString(userId)) return false;
    const e = await this.deps.events(tenant).findVisible(oid(eventId), oid(userId));
    return !!e && roleOf(e, oid(userId)) === 'host';
  }

  /** The event a meeting code opens (join by code asks that event's meeting actor). */
  async eventIdForCode(tenant: string, meetingCode: string): Promise<string> {
    const e = await this.deps.events(tenant).findByMeetingCode(meetingCode.toUpperCase());
    if (!e) throw new AppError('meeting_not_found', 'No meeting with this code');
    return String(e._id);
  }

  /**
   * Who is joining and under which waiting room policy: by code (anyone holding it; a stranger is a
   * guest) or by event id (participants only). Refuses events that cannot be joined.
   */
  async admission(p: Principal, eventId: string, meetingCode?: string): Promise<Admission> {
    const e = meetingCode ? await this.byCode(p.tenant, meetingCode) : await this.visible(p, eventId);
    if (String(e._id) !== eventId) throw new AppError('meeting_not_found', 'No meeting with this code');
    if (!(JOINABLE as readonly string[]).includes(e.status))
      throw new AppError('invalid_state', `The meeting is ${e.status}`);
    const own = isObjectIdString(p.userId) ? roleOf(e, oid(p.userId)) : undefined;
    if (meetingCode && !own && p.role !== 'device' && !(await this.deps.features(p.tenant)).guestJoin)
      throw new AppError('forbidden', 'Guest join is disabled for this tenant');
    const s = await this.deps.meetingSettings(p.tenant);
    return {
      eventId,
      role: own ?? (p.role === 'device' ? 'device' : 'guest'),
      invited: !!own,
      waitingRoom: typeof e.waitingRoom === 'boolean' ? e.waitingRoom : s.waitingRoom,
      autoAdmitInvited: s.waitingRoomAutoAdmitInvited,
      expirySeconds: s.waitingRoomExpirySeconds,
      event: e,
    };
  }

  private async byCode(tenant: string, meetingCode: string): Promise<EventRecord> {
    const e = await this.deps.events(tenant).findByMeetingCode(meetingCode.toUpperCase());
    if (!e) throw new AppError('meeting_not_found', 'No meeting with this code');
    return e;
  }

  /** Starts the event's meeting (idempotent): assigns the room and returns the host's join details. */
  async initEvent(p: Principal, eventId: string): Promise<MeetingData> {
    const e = await this.visible(p, eventId);
    const role = roleOf(e, oid(p.userId));
    if (role !== 'host') throw new AppError('forbidden', 'Only a host of the event can start its meeting');
    const started = await this.ensureStarted(p.tenant, e, p);
    const data = await this.meetingData(p.tenant, started, await this.identity(p, role));
    await this.joined(p, data);
    return data;
  }

  /**
   * Join details of a started meeting for one of its participants. `seen`: the event as this caller's
   * admission read it in the same turn (Admission.event), used instead of reading it again. `held`: the
   * meeting actor holds the caller as a member (a rejoin after a reconnection): the event as an earlier
   * join on this node read it serves, if the caller may see it (decision 1160).
   */
  async joinDetails(p: Principal, eventId: string, seen?: EventRecord, held = false): Promise<MeetingData> {
    const e =
      (seen && String(seen._id) === eventId ? seen : undefined) ??
      (held ? this.keptFor(p, eventId) : undefined) ??
      (await this.visible(p, eventId));
    if (e.status !== 'started' || !e.room?.roomName) throw new AppError('invalid_state', 'The meeting has not started');
    this.keep(p.tenant, e);
    const data = await this.meetingData(p.tenant, e, await this.identity(p, roleOf(e, oid(p.userId)) ?? 'participant'));
    await this.joined(p, data);
    return data;
  }

  /**
   * A participant's connection to the meeting ended (the hub socket that entered it went away): the
   * leave of the audit trail. Nothing else changes: the meeting goes on for the others.
   */
  async left(p: Principal, eventId: string, reason: 'disconnect'): Promise<void> {
    await recordBy(this.deps.audit, p, 'meeting.leave', { eventId, subjectId: p.userId, details: { reason } });
  }

  /** One audit entry per accepted join, with the role the caller joined in. */
  private async joined(p: Principal, data: MeetingData, byCode = false): Promise<void> {
    await recordBy(this.deps.audit, p, 'meeting.join', {
      eventId: data.eventId,
      subjectId: p.userId,
      details: { role: data.role, ...(byCode ? { byCode } : {}) },
    });
  }

  /**
   * Join by meeting code (QR or typed). The code is the capability: whoever holds it joins, as a
   * guest unless they belong to the event. Joining starts a scheduled meeting.
   */
  async joinByCode(tenant: string, meetingCode: string, joiner: Joiner, seen?: EventRecord): Promise<JoinResponse> {
    const code = meetingCode.toUpperCase();
    const e = seen?.meetingCode === code ? seen : await this.deps.events(tenant).findByMeetingCode(code);
    if (!e) throw new AppError('meeting_not_found', 'No meeting with this code');
    if (!(JOINABLE as readonly string[]).includes(e.status))
      throw new AppError('invalid_state', `The meeting is ${e.status}`);
    let participant: VcsParticipant;
    if (joiner.kind === 'guest') {
      if (!(await this.deps.features(tenant)).guestJoin)
        throw new AppError('forbidden', 'Guest join is disabled for this tenant');
      participant = { identity: `guest:${randomUUID()}`, name: joiner.displayName, role: 'guest' };
    } else {
      const role = isObjectIdString(joiner.principal.userId) ? roleOf(e, oid(joiner.principal.userId)) : undefined;
      participant = await this.identity(
        joiner.principal,
        role ?? (joiner.principal.role === 'device' ? 'device' : 'guest'),
      );
    }
    const by = joiner.kind === 'principal' ? joiner.principal : undefined;
    const started = await this.ensureStarted(tenant, e, by);
    const data = await this.meetingData(tenant, started, participant);
    if (by) await this.joined(by, data, true);
    else
      await this.deps.audit?.record(tenant, {
        action: 'meeting.join',
        outcome: 'success',
        eventId: data.eventId,
        details: { role: 'guest', byCode: true, guest: participant.identity, displayName: participant.name },
      });
    return { ...data, participant };
  }

  /**
   * endMeeting (decision 900): started -> ended, then the VCS room is closed through the port.
   * Idempotent: an event already ended (or completed by telemetry) only has its room closed again.
   * Not started (scheduled) or cancelled: invalid_state. The outbound `consultation.ended` stays the
   * conference's own end (telemetry), which the closed room brings about. `last.seq`, the meeting's last
   * meetingEvent number, is kept with the end by the same write (decision 1104).
   */
  async endEvent(tenant: string, eventId: string, last?: { seq: number }): Promise<EventRecord> {
    const repo = this.deps.events(tenant);
    const id = oid(eventId, 'event_not_found');
    this.started.delete(`${tenant}|${eventId}`);
    const e = await repo.findById(id);
    if (!e) throw new AppError('event_not_found', `No event ${eventId}`);
    const kept = last ? { meetingSeq: last.seq } : {};
    const moved =
      e.status === 'started' ? await repo.transition(id, ['started'], 'ended', { endedAt: new Date(), ...kept }) : null;
    const now = moved ?? (e.status === 'started' ? await repo.findById(id) : e);
    if (!now || (now.status !== 'ended' && now.status !== 'completed'))
      throw new AppError('invalid_state', `The meeting is ${now?.status ?? 'gone'}`);
    // Ended before (a turn lost after its write, the conference's completion): the last seq still goes with it.
    if (last && !moved) await repo.keepMeetingSeq(id, last.seq);
    if (now.room?.roomName)
      await this.deps
        .vcs()
        .closeRoom(tenant, { provider: now.room.provider!, roomName: now.room.roomName, url: now.room.url! });
    return now;
  }

  /** How the event's meeting ended, or null while it is not over or there is no such event (decision 1104). */
  async meetingEnd(tenant: string, eventId: string): Promise<MeetingEnd | null> {
    const e = isObjectIdString(eventId) ? await this.deps.events(tenant).findById(oid(eventId)) : null;
    return e && meetingEndOf(e);
  }

  /** Keeps the meeting's last meetingEvent number with its event, never lowering it (decision 1104). */
  async keepLastSeq(tenant: string, eventId: string, seq: number): Promise<void> {
    await this.deps.events(tenant).keepMeetingSeq(oid(eventId, 'event_not_found'), seq);
  }

  /**
   * removeParticipant (decision 961): takes the member out of the event's VCS room through the port
   * (disconnected, earlier join tokens refused). Their VCS identity is the one their join details were
   * minted for: `device:<id>` for a headset, the user id otherwise. A meeting without a room has no one
   * in it to remove.
   */
  async removeFromRoom(tenant: string, eventId: string, member: { userId: string; device: boolean }): Promise<void> {
    const e = await this.deps.events(tenant).findById(oid(eventId, 'event_not_found'));
    if (!e) throw new AppError('event_not_found', `No event ${eventId}`);
    if (!e.room?.roomName) return;
    const user = isObjectIdString(member.userId) ? await this.deps.users(tenant).findById(oid(member.userId)) : null;
    const identity = member.device || user?.kind === 'device' ? `device:${member.userId}` : member.userId;
    await this.deps
      .vcs()
      .removeParticipant(tenant, { provider: e.room.provider!, roomName: e.room.roomName, url: e.room.url! }, identity);
  }

  /** A headset attaches itself to an event, proving it holds the event's join code. */
  async addDeviceToEvent(
    p: Principal,
    input: { eventId: string; joinCode: string },
  ): Promise<{ eventId: string; deviceUserId: string; meetingCode: string }> {
    const repo = this.deps.events(p.tenant);
    const e = isObjectIdString(input.eventId) ? await repo.findById(oid(input.eventId)) : null;
    if (!e || !constantTimeEqual(e.meetingCode, input.joinCode.toUpperCase()))
      throw new AppError('event_not_found', 'No event for this id and join code');
    if (!(JOINABLE as readonly string[]).includes(e.status))
      throw new AppError('invalid_state', `The meeting is ${e.status}`);
    const updated = await repo.addDevice(e._id, oid(p.userId, 'user_not_found'));
    return { eventId: String(e._id), deviceUserId: p.userId, meetingCode: updated!.meetingCode };
  }

  /**
   * Rapid connect: a host starts an ad-hoc consultation with a headset or other device right now.
   * Creates a short event with the caller as host, starts its room and returns what the device needs.
   */
  async startRapidConnect(p: Principal, deviceId: string): Promise<RapidConnectUserInfo> {
    if (!(await this.deps.features(p.tenant)).rapidConnect)
      throw new AppError('forbidden', 'Rapid connect is disabled for this tenant');
    for (const needed of ['events:write', 'meetings:host'] as const) {
      if (!p.permissions.has(needed))
        throw new AppError(
          'permission_denied',
          `Rapid connect creates and hosts an event: it requires the '${needed}' permission`,
        );
    }
    const me = oid(p.userId, 'user_not_found');
    const id = await this.deps.resolveDevice(p.tenant, deviceId);
    const device = await this.deps.devices(p.tenant).findAvailable(oid(id, 'device_not_found'), me);
    if (!device) throw new AppError('device_not_found', `No device ${deviceId}`);
    const now = new Date();
    const fresh = {
      name: `Rapid connect: ${device.name}`,
      startAt: now,
      endAt: new Date(now.getTime() + 3_600_000),
      organizerId: me,
      participants: [{ userId: me, role: 'host' as const }],
      attachments: [],
      meetingCode: newMeetingCode(),
    };
    const e = await this.deps
      .events(p.tenant)
      .create(fresh, (id) => [
        announce('consultation.scheduled', String(id), consultationData({ ...fresh, status: 'scheduled' })),
      ]);
    await this.deps.announced?.(p.tenant, { source: 'Event', ids: [e._id] });
    await recordBy(this.deps.audit, p, 'event.create', {
      eventId: String(e._id),
      details: { rapidConnect: true, deviceId: String(device._id) },
    });
    const started = await this.ensureStarted(p.tenant, e, p);
    const host = await this.identity(p, 'host');
    const data = await this.meetingData(p.tenant, started, host);
    await this.joined(p, data);
    return { ...data, device, host: { userId: p.userId, displayName: host.name } };
  }

  /** The kept started event, when the caller may see it (else it is read: an attached device may be new). */
  private keptFor(p: Principal, eventId: string): EventRecord | undefined {
    const e = this.started.get(`${p.tenant}|${eventId}`);
    // Its organizer, a participant or an attached device: who may see it (the repository's findVisible).
    return e && isObjectIdString(p.userId) && roleOf(e, oid(p.userId)) ? e : undefined;
  }

  private keep(tenant: string, e: EventRecord): void {
    const key = `${tenant}|${String(e._id)}`;
    this.started.delete(key);
    this.started.set(key, e);
    if (this.started.size > STARTED_KEPT) this.started.delete(this.started.keys().next().value!);
  }

  private async visible(p: Principal, eventId: string): Promise<EventRecord> {
    const e =
      isObjectIdString(eventId) && isObjectIdString(p.userId)
        ? await this.deps.events(p.tenant).findVisible(oid(eventId), oid(p.userId))
        : null;
    if (!e) throw new AppError('event_not_found', `No event ${eventId}`);
    return e;
  }

  /**
   * scheduled -> started with a room; concurrent starters converge on the same room (createRoom is
   * idempotent). The one caller whose transition moved the event records the start (`by`; none for a guest).
   */
  private async ensureStarted(tenant: string, e: EventRecord, by?: Principal): Promise<EventRecord> {
    if (e.status === 'started' && e.room?.roomName) return e;
    const status = e.status as EventStatus;
    if (status !== 'started' && !sourcesOf('started').includes(status))
      throw new AppError('invalid_state', `The meeting is ${e.status}`);
    const room = await this.deps.vcs().createRoom(tenant, String(e._id));
    const repo = this.deps.events(tenant);
    await repo.setRoom(e._id, { ...room, assignedAt: new Date() });
    const moved = await repo.transition(e._id, sourcesOf('started'), 'started', { startedAt: new Date() }, (now) => [
      announce('consultation.started', String(e._id), consultationData(now)),
    ]);
    if (moved) await this.deps.announced?.(tenant, { source: 'Event', ids: [e._id] });
    if (moved) await this.recordStart(tenant, String(e._id), room.provider, by);
    const now = moved ?? (await repo.findById(e._id));
    if (!now || now.status !== 'started')
      throw new AppError('invalid_state', `The meeting is ${now?.status ?? 'gone'}`);
    return now;
  }

  private async recordStart(tenant: string, eventId: string, provider: string, by?: Principal): Promise<void> {
    const details = { provider };
    if (by) await recordBy(this.deps.audit, by, 'meeting.start', { eventId, details });
    else await this.deps.audit?.record(tenant, { action: 'meeting.start', outcome: 'success', eventId, details });
  }

  private async meetingData(tenant: string, e: EventRecord, who: VcsParticipant): Promise<MeetingData> {
    const room: VcsRoom = { provider: e.room!.provider!, roomName: e.room!.roomName!, url: e.room!.url! };
    const join = await this.deps.vcs().joinDetails(tenant, room, who);
    return {
      eventId: String(e._id),
      eventName: e.name,
      meetingCode: e.meetingCode,
      status: e.status,
      role: who.role,
      join,
    };
  }

  /**
   * Who joins the room: named as the caller's token states (display name and kind at issue time,
   * decision 1153), else as the user reads now (a token that does not carry them).
   */
  private async identity(p: Principal, role: MeetingRole): Promise<VcsParticipant> {
    const user =
      p.displayName !== undefined && p.kind
        ? { displayName: p.displayName, kind: p.kind }
        : isObjectIdString(p.userId)
          ? await this.deps.users(p.tenant).findById(oid(p.userId))
          : null;
    const isDevice = user?.kind === 'device' || p.role === 'device';
    return {
      identity: isDevice ? `device:${p.userId}` : p.userId,
      name: user?.displayName ?? p.username,
      role: isDevice && role !== 'host' ? 'device' : role,
    };
  }
}
