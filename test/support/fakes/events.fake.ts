import { Types } from 'mongoose';
import {
  scheduledEvent,
  type EventChanges,
  type EventKey,
  type EventRecord,
  type EventRepository,
  type NewEvent,
} from '../../../src/data/repositories/event.repository.js';
import type { EventStatus } from '../../../src/data/models/event.model.js';
import type { OutboxEntry } from '../../../src/data/outbox.js';
import { holds, same, type Doc, type FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

const ids = (v: unknown): Types.ObjectId[] => (Array.isArray(v) ? (v as Types.ObjectId[]) : []);

/** `visibleTo` of the real repository: the organizer, a participant or an attached device. */
function visibleTo(e: Doc, userId: Types.ObjectId): boolean {
  return same(e.organizerId, userId) || holds(e.participantIds, userId) || holds(e.deviceIds, userId);
}

/** Newest start first, ties by `_id` descending (the list's order). */
function newestFirst(a: Doc, b: Doc): number {
  const d = (b.startAt as Date).getTime() - (a.startAt as Date).getTime();
  if (d) return d;
  const x = String(a._id);
  const y = String(b._id);
  return x < y ? 1 : x > y ? -1 : 0;
}

/** The event repository on a fake tenant database (src/data/repositories/event.repository.ts). */
export class FakeEventRepository implements PublicPart<EventRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get events() {
    return this.db.collection('Event');
  }

  private record(d: Doc | undefined, projection?: Record<string, 0 | 1>): EventRecord | null {
    return d ? (this.events.read(d, projection) as unknown as EventRecord) : null;
  }

  async create(e: NewEvent, outbox?: (id: Types.ObjectId) => OutboxEntry[]): Promise<EventRecord> {
    return this.events.insert(scheduledEvent(e, outbox)) as unknown as EventRecord;
  }

  async findById(id: Types.ObjectId): Promise<EventRecord | null> {
    return this.record(this.events.byId(id));
  }

  async findVisible(id: Types.ObjectId, userId: Types.ObjectId): Promise<EventRecord | null> {
    const e = this.events.byId(id);
    return e && visibleTo(e, userId) ? this.record(e) : null;
  }

  async findByMeetingCode(code: string): Promise<EventRecord | null> {
    return this.record(this.events.stored((e) => e.meetingCode === code)[0]);
  }

  private listed(userId: Types.ObjectId, name?: string): Doc[] {
    const needle = name?.toLowerCase();
    return this.events.stored((e) => visibleTo(e, userId) && (!needle || String(e.nameLower).includes(needle)));
  }

  async list(
    userId: Types.ObjectId,
    q: { name?: string; after?: EventKey; skip: number; take: number },
  ): Promise<EventRecord[]> {
    const after = q.after;
    const rows = this.listed(userId, q.name)
      .filter((e) => !after || newestFirst({ startAt: after.startAt, _id: after._id }, e) < 0)
      .sort(newestFirst);
    return rows.slice(q.skip, q.skip + q.take).map((e) => this.record(e)!);
  }

  async count(userId: Types.ObjectId, name?: string): Promise<number> {
    return this.listed(userId, name).length;
  }

  async update(id: Types.ObjectId, organizerId: Types.ObjectId, c: EventChanges): Promise<EventRecord | null> {
    const e = this.events.byId(id);
    if (!e || !same(e.organizerId, organizerId) || e.status !== 'scheduled') return null;
    const { after } = this.events.update(e, (d) => {
      Object.assign(d, c);
      if (c.name) d.nameLower = c.name.toLowerCase();
      if (c.participants) d.participantIds = c.participants.map((p) => p.userId);
    });
    return this.record(after);
  }

  async transition(
    id: Types.ObjectId,
    from: readonly EventStatus[],
    to: EventStatus,
    set: Record<string, unknown> = {},
    outbox?: (current: EventRecord) => OutboxEntry[],
  ): Promise<EventRecord | null> {
    const e = this.events.byId(id);
    if (!e || !from.includes(e.status as EventStatus)) return null;
    const current = this.record(e, { outbox: 0 })!;
    const entries = outbox?.({ ...current, status: to, ...set } as EventRecord);
    const { after } = this.events.update(e, (d) => {
      Object.assign(d, { status: to, ...set });
      if (entries?.length) d.outbox = [...((d.outbox as OutboxEntry[] | undefined) ?? []), ...entries];
    });
    return this.record(after);
  }

  async setRoom(
    id: Types.ObjectId,
    room: { provider: string; roomName: string; url: string; assignedAt: Date },
  ): Promise<EventRecord | null> {
    const e = this.events.byId(id);
    return e ? this.record(this.events.update(e, (d) => void (d.room = room)).after) : null;
  }

  async addRecordingConsent(id: Types.ObjectId, answer: Record<string, unknown> & { key: string }): Promise<boolean> {
    const e = this.events.byId(id);
    const consents = (e?.recordingConsents as { key: string }[] | undefined) ?? [];
    if (!e || consents.some((c) => c.key === answer.key)) return false;
    this.events.update(e, (d) => void (d.recordingConsents = [...consents, answer]));
    return true;
  }

  async keepMeetingSeq(id: Types.ObjectId, seq: number): Promise<void> {
    const e = this.events.byId(id);
    if (e) this.events.update(e, (d) => void (d.meetingSeq = Math.max(Number(d.meetingSeq ?? seq), seq)));
  }

  async addDevice(id: Types.ObjectId, deviceUserId: Types.ObjectId): Promise<EventRecord | null> {
    const e = this.events.byId(id);
    if (!e) return null;
    const { after } = this.events.update(e, (d) => {
      if (!holds(d.deviceIds, deviceUserId)) d.deviceIds = [...ids(d.deviceIds), deviceUserId];
    });
    return this.record(after);
  }

  /** Non-cancelled events the user takes part in, newest start first, at most `limit`. */
  private recentOf(userId: Types.ObjectId, limit: number): Doc[] {
    return this.events
      .stored((e) => holds(e.participantIds, userId) && e.status !== 'cancelled')
      .sort((a, b) => (b.startAt as Date).getTime() - (a.startAt as Date).getTime())
      .slice(0, limit)
      .map((e) => this.events.read(e));
  }

  async recentCounterparts(userId: Types.ObjectId, limitEvents: number): Promise<{ id: Types.ObjectId; at: Date }[]> {
    return this.recentOf(userId, limitEvents).flatMap((r) =>
      ids(r.participantIds)
        .filter((p) => !p.equals(userId))
        .map((id) => ({ id, at: r.startAt as Date })),
    );
  }

  async careTeamOf(userId: Types.ObjectId, limitEvents: number): Promise<Types.ObjectId[]> {
    return this.recentOf(userId, limitEvents).flatMap((r) => [
      r.organizerId as Types.ObjectId,
      ...ids(r.participantIds),
      ...ids(r.deviceIds),
    ]);
  }

  async findMediaFiles(
    wanted: readonly Types.ObjectId[],
  ): Promise<{ _id: Types.ObjectId; fileName: string; hash: string }[]> {
    if (!wanted.length) return [];
    return this.db.collection('MediaFile').find((f) => holds(wanted, f._id), { fileName: 1, hash: 1 }) as unknown as {
      _id: Types.ObjectId;
      fileName: string;
      hash: string;
    }[];
  }
}
