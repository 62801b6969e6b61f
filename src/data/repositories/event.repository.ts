import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { EventDoc } from '../models/event.model.js';
import type { EventStatus } from '../models/event.model.js';
import { escapeRegex } from './user.repository.js';
import { claimedTransition } from './transition-claim.js';
import { pushOutbox, type OutboxEntry } from '../outbox.js';

export type { EventRecord } from '../models/event.model.js';
import type { EventRecord } from '../models/event.model.js';

export interface NewEvent {
  name: string;
  description?: string;
  startAt: Date;
  endAt: Date;
  organizerId: Types.ObjectId;
  participants: { userId: Types.ObjectId; role: 'host' | 'participant' | 'guest' }[];
  attachments: { mediaFileId: Types.ObjectId; name: string; hash: string }[];
  meetingCode: string;
  /** The event's waiting room override; null or absent = the tenant's setting. */
  waitingRoom?: boolean | null;
}

/** Where a page of an event list starts: after the event with this (startAt, _id), in list order. */
export interface EventKey {
  startAt: Date;
  _id: Types.ObjectId;
}

export type EventChanges = Partial<Omit<NewEvent, 'organizerId' | 'meetingCode'>>;

/** Who may see an event: its organizer, participants and attached devices. */
function visibleTo(userId: Types.ObjectId) {
  return { $or: [{ organizerId: userId }, { participantIds: userId }, { deviceIds: userId }] };
}

/** `visibleTo` on a document read: the organizer, a participant or an attached device. */
function isVisibleTo(e: EventRecord, userId: Types.ObjectId): boolean {
  return (
    userId.equals(e.organizerId) ||
    (e.participantIds ?? []).some((p) => userId.equals(p)) ||
    (e.deviceIds ?? []).some((d) => userId.equals(d))
  );
}

/** The document `create` inserts (the in-memory fake inserts the same): a new id, scheduled, its derived fields. */
export function scheduledEvent(e: NewEvent, outbox?: (id: Types.ObjectId) => OutboxEntry[]) {
  const _id = new Types.ObjectId();
  return {
    _id,
    ...e,
    nameLower: e.name.toLowerCase(),
    participantIds: e.participants.map((p) => p.userId),
    status: 'scheduled' as const,
    ...(outbox ? { outbox: outbox(_id) } : {}),
  };
}

/** Fields besides the status that decide whose care team an event is part of (`careTeamOf`'s filter, result and order). */
const CARE_TEAM_FIELDS = ['organizerId', 'participants', 'participantIds', 'deviceIds', 'startAt'];

/**
 * Whether a move changes care teams: `careTeamOf` counts every event but a cancelled one, so only a move
 * to or from `cancelled`, or one that sets a field of CARE_TEAM_FIELDS, does.
 */
function movesCareTeam(from: readonly EventStatus[], to: EventStatus, set: Record<string, unknown>): boolean {
  return to === 'cancelled' || from.includes('cancelled') || Object.keys(set).some((k) => CARE_TEAM_FIELDS.includes(k));
}

/**
 * Events (consultations) of one tenant. Every write that can change a care team runs under
 * `db.careTeamWrite` (decision 1132). Status changes are guarded updates, never read-modify-write. */
export class EventRepository {
  constructor(private readonly db: TenantDb) {}

  private get Event() {
    return this.db.models.Event;
  }

  /** Inserts a scheduled event; `outbox` announces it in the same insert (decision 890). */
  async create(e: NewEvent, outbox?: (id: Types.ObjectId) => OutboxEntry[]): Promise<EventRecord> {
    const doc = await this.db.careTeamWrite(() => this.Event.create(scheduledEvent(e, outbox)));
    return doc.toObject() as EventRecord;
  }

  findById(id: Types.ObjectId): Promise<EventRecord | null> {
    return this.Event.findById(id).lean<EventRecord>().exec();
  }

  /**
   * The event when the user may see it. Read by `_id` alone and the visibility checked on the document,
   * which is `visibleTo` exactly: mongo-java-server answers a query from the `_id` index only when it
   * names `_id` alone, and scanned every event of the tenant for each join and meeting read with the
   * visibility in the query.
   */
  async findVisible(id: Types.ObjectId, userId: Types.ObjectId): Promise<EventRecord | null> {
    const e = await this.Event.findOne({ _id: id }).lean<EventRecord>().exec();
    return e && isVisibleTo(e, userId) ? e : null;
  }

  findByMeetingCode(code: string): Promise<EventRecord | null> {
    return this.Event.findOne({ meetingCode: code }).lean<EventRecord>().exec();
  }

  private listFilter(userId: Types.ObjectId, name?: string) {
    return { ...visibleTo(userId), ...(name ? { nameLower: new RegExp(escapeRegex(name.toLowerCase())) } : {}) };
  }

  /**
   * A page of the caller's events, newest start first (ties by `_id`), beginning after `after` when
   * given (a key on the list's indexes instead of skipping the events before it), then skipping `skip`.
   */
  list(
    userId: Types.ObjectId,
    q: { name?: string; after?: EventKey; skip: number; take: number },
  ): Promise<EventRecord[]> {
    const f = this.listFilter(userId, q.name);
    const filter = q.after
      ? {
          $and: [
            f,
            { $or: [{ startAt: { $lt: q.after.startAt } }, { startAt: q.after.startAt, _id: { $lt: q.after._id } }] },
          ],
        }
      : f;
    return this.Event.find(filter)
      .sort({ startAt: -1, _id: -1 })
      .skip(q.skip)
      .limit(q.take)
      .lean<EventRecord[]>()
      .exec();
  }

  count(userId: Types.ObjectId, name?: string): Promise<number> {
    return this.Event.countDocuments(this.listFilter(userId, name)).exec();
  }

  /** Applies changes only while the event is still `scheduled` (the one state in which it is editable). */
  update(id: Types.ObjectId, organizerId: Types.ObjectId, c: EventChanges): Promise<EventRecord | null> {
    const set: Record<string, unknown> = { ...c };
    if (c.name) set.nameLower = c.name.toLowerCase();
    if (c.participants) set.participantIds = c.participants.map((p) => p.userId);
    return this.db.careTeamWrite(() =>
      this.Event.findOneAndUpdate(
        { _id: id, organizerId, status: 'scheduled' },
        { $set: set },
        { returnDocument: 'after' },
      )
        .lean<EventRecord>()
        .exec(),
    );
  }

  /**
   * Moves an event to `to` only from one of `from`; null when the guard did not match or another caller
   * moved it first. Exclusive on FerretDB too, through a transition claim (transition-claim.ts).
   */
  async transition(
    id: Types.ObjectId,
    from: readonly EventStatus[],
    to: EventStatus,
    set: Record<string, unknown> = {},
    outbox?: (current: EventRecord) => OutboxEntry[],
  ): Promise<EventRecord | null> {
    const current = await this.Event.findById(id, { outbox: 0 }).lean<EventRecord>().exec();
    if (!current || !from.includes(current.status as EventStatus)) return null;
    // The announcement rides on the guarded update itself: it is stored exactly when the move wins.
    const move = () =>
      claimedTransition<EventRecord>(this.db, this.Event, id, current.status, {
        $set: { status: to, ...set },
        ...pushOutbox(outbox?.({ ...current, status: to, ...set } as EventRecord)),
      });
    return movesCareTeam(from, to, set) ? this.db.careTeamWrite(move) : move();
  }

  setRoom(
    id: Types.ObjectId,
    room: { provider: string; roomName: string; url: string; assignedAt: Date },
  ): Promise<EventRecord | null> {
    return this.Event.findOneAndUpdate({ _id: id }, { $set: { room } }, { returnDocument: 'after' })
      .lean<EventRecord>()
      .exec();
  }

  /**
   * Appends a recording consent answer unless the same person already answered the same request
   * (`key`): a retried write changes nothing. Returns whether it was added.
   */
  async addRecordingConsent(id: Types.ObjectId, answer: Record<string, unknown> & { key: string }): Promise<boolean> {
    const r = await this.Event.updateOne(
      { _id: id, 'recordingConsents.key': { $ne: answer.key } },
      { $push: { recordingConsents: answer } },
    ).exec();
    return r.modifiedCount > 0;
  }

  /** Raises the meeting's last meetingEvent number kept with the event; `$max`, so a late write never lowers it. */
  async keepMeetingSeq(id: Types.ObjectId, seq: number): Promise<void> {
    await this.Event.updateOne({ _id: id }, { $max: { meetingSeq: seq } }).exec();
  }

  addDevice(id: Types.ObjectId, deviceUserId: Types.ObjectId): Promise<EventRecord | null> {
    return this.db.careTeamWrite(() =>
      this.Event.findOneAndUpdate({ _id: id }, { $addToSet: { deviceIds: deviceUserId } }, { returnDocument: 'after' })
        .lean<EventRecord>()
        .exec(),
    );
  }

  /** Counterparts of a user in recent events, most recent first (feeds `frequent` contacts). */
  async recentCounterparts(userId: Types.ObjectId, limitEvents: number): Promise<{ id: Types.ObjectId; at: Date }[]> {
    const rows = await this.Event.find(
      { participantIds: userId, status: { $ne: 'cancelled' } },
      { participantIds: 1, startAt: 1 },
    )
      .sort({ startAt: -1 })
      .limit(limitEvents)
      .lean<{ participantIds: Types.ObjectId[]; startAt: Date }[]>()
      .exec();
    return rows.flatMap((r) => r.participantIds.filter((p) => !p.equals(userId)).map((id) => ({ id, at: r.startAt })));
  }

  /** Everyone of the user's recent non-cancelled events: organizers, participants and attached devices. */
  async careTeamOf(userId: Types.ObjectId, limitEvents: number): Promise<Types.ObjectId[]> {
    const rows = await this.Event.find(
      { participantIds: userId, status: { $ne: 'cancelled' } },
      { organizerId: 1, participantIds: 1, deviceIds: 1 },
    )
      .sort({ startAt: -1 })
      .limit(limitEvents)
      .lean<{ organizerId: Types.ObjectId; participantIds: Types.ObjectId[]; deviceIds: Types.ObjectId[] }[]>()
      .exec();
    return rows.flatMap((r) => [r.organizerId, ...r.participantIds, ...r.deviceIds]);
  }

  /** Media files of this tenant by id (attachments are validated against them). */
  findMediaFiles(ids: readonly Types.ObjectId[]): Promise<{ _id: Types.ObjectId; fileName: string; hash: string }[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db.models.MediaFile.find({ _id: { $in: ids } }, { fileName: 1, hash: 1 })
      .lean<{ _id: Types.ObjectId; fileName: string; hash: string }[]>()
      .exec();
  }
}
