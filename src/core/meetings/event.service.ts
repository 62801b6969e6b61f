import type { AuditService } from '../audit/audit.service.js';
import { randomInt } from 'node:crypto';
import type { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { EventKey, EventRecord, EventRepository, NewEvent } from '../../data/repositories/event.repository.js';
import { TtlCache } from '../../kernel/ttl-cache.js';
import type { UserRecord, UserRepository } from '../../data/repositories/user.repository.js';
import { AppError, type FieldError } from '../../kernel/errors.js';
import { oid, oids } from '../../kernel/object-id.js';
import { clampTake, type Page } from '../../kernel/paging.js';
import { sourcesOf } from './event-status.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { consultationData } from '../webhooks/consultation-events.js';
import {
  MAX_EVENT_HOURS,
  type CreateEventCommand,
  type DeleteEventsCommand,
  type EventListQuery,
  type UpdateEventCommand,
} from './event.schema.js';

export interface EventDeps {
  events: (tenant: string) => EventRepository;
  users: (tenant: string) => Pick<UserRepository, 'existingActiveIds' | 'findByIds'>;
  onlineMany: (tenant: string, userIds: readonly string[]) => Promise<Set<string>>;
  /** The media access rule (core/media-access.ts): only content the caller may read can be attached. */
  canReadMedia: (p: Principal, hash: string) => Promise<boolean>;
  pageMaxTake: number;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: every create, change and cancellation is recorded (docs/audit.md). */
  audit?: Pick<AuditService, 'record'>;
}

export interface EventParticipantView {
  user: UserRecord;
  role: 'host' | 'participant' | 'guest';
  online: boolean;
}

export interface CancelResult {
  cancelled: string[];
  failed: { eventId: string; code: 'event_not_found' | 'invalid_state' }[];
}

/** How long a list walk's page keys are kept (decision 213). */
export const PAGE_KEY_TTL_MS = 60_000;
const PAGE_KEYS_PER_WALK = 200;

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A join code guests and headsets type or scan: 10 unambiguous characters (about 50 bits). */
export function newMeetingCode(): string {
  return Array.from({ length: 10 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}

/**
 * Scheduling: events (consultations) with participants, dates and attachments. Only organizers
 * change or cancel an event, and only while it is `scheduled` (src/core/meetings/event-status.ts).
 */
export class EventService {
  /**
   * Page keys of recent list walks (decision 213): per tenant, caller and name filter, the list
   * position where a served page ended and the key of its last event, so the next page starts from
   * the key instead of skipping every event before it.
   */
  private readonly pageKeys = new TtlCache<string, Map<number, EventKey>>({
    ttlMs: PAGE_KEY_TTL_MS,
    maxEntries: 10_000,
  });

  constructor(private readonly deps: EventDeps) {}

  async list(p: Principal, q: EventListQuery): Promise<Page<EventRecord>> {
    const repo = this.deps.events(p.tenant);
    const me = oid(p.userId, 'user_not_found');
    const page = clampTake(q, this.deps.pageMaxTake);
    const walk = JSON.stringify([p.tenant, p.userId, q.name ?? '']);
    const keys = this.pageKeys.get(walk) ?? new Map<number, EventKey>();
    const from = Math.max(0, ...[...keys.keys()].filter((at) => at <= page.skip));
    const [items, total] = await Promise.all([
      repo.list(me, { name: q.name, after: keys.get(from), skip: page.skip - from, take: page.take }),
      repo.count(me, q.name),
    ]);
    const last = items[items.length - 1];
    if (last) {
      keys.set(page.skip + items.length, { startAt: last.startAt, _id: last._id });
      if (keys.size > PAGE_KEYS_PER_WALK) keys.delete(keys.keys().next().value!);
      this.pageKeys.set(walk, keys);
    }
    return { items, total, ...page };
  }

  /** A write of this node moves list positions: its tenant's walks start again from the top. */
  private forgetPageKeys(tenant: string): void {
    this.pageKeys.deleteWhere((k) => k.startsWith(`[${JSON.stringify(tenant)},`));
  }

  /** The event when the caller organizes, attends or is attached to it; event_not_found otherwise. */
  async details(p: Principal, eventId: string): Promise<EventRecord> {
    const e = await this.deps
      .events(p.tenant)
      .findVisible(oid(eventId, 'event_not_found'), oid(p.userId, 'event_not_found'));
    if (!e) throw new AppError('event_not_found', `No event ${eventId}`);
    return e;
  }

  async participants(p: Principal, eventId: string): Promise<EventParticipantView[]> {
    const e = await this.details(p, eventId);
    const users = await this.deps.users(p.tenant).findByIds(e.participants.map((x) => x.userId));
    const byId = new Map(users.map((u) => [String(u._id), u]));
    const online = await this.deps.onlineMany(
      p.tenant,
      users.map((u) => String(u._id)),
    );
    return e.participants.flatMap((x) => {
      const user = byId.get(String(x.userId));
      return user ? [{ user, role: x.role as EventParticipantView['role'], online: online.has(String(user._id)) }] : [];
    });
  }

  async create(p: Principal, cmd: CreateEventCommand): Promise<EventRecord> {
    const organizerId = oid(p.userId, 'user_not_found');
    const dates = checkDates(cmd.startAt, cmd.endAt);
    const participants = await this.resolveParticipants(p.tenant, organizerId, cmd.participants);
    const attachments = await this.resolveAttachments(p, cmd.attachments);
    const base: Omit<NewEvent, 'meetingCode'> = {
      name: cmd.name,
      description: cmd.description,
      ...dates,
      organizerId,
      participants,
      attachments,
      ...(cmd.waitingRoom !== undefined ? { waitingRoom: cmd.waitingRoom } : {}),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const created = await this.deps
          .events(p.tenant)
          .create({ ...base, meetingCode: newMeetingCode() }, (id) => [
            announce('consultation.scheduled', String(id), consultationData({ ...base, status: 'scheduled' })),
          ]);
        await this.deps.announced?.(p.tenant, { source: 'Event', ids: [created._id] });
        this.forgetPageKeys(p.tenant);
        await this.audited(p, 'event.create', String(created._id), { participants: participants.length });
        return created;
      } catch (e) {
        if ((e as { code?: number }).code !== 11000 || attempt >= 3) throw e;
      }
    }
  }

  async update(p: Principal, cmd: UpdateEventCommand): Promise<EventRecord> {
    const current = await this.details(p, cmd.eventId);
    const me = oid(p.userId);
    if (!current.organizerId.equals(me)) throw new AppError('forbidden', 'Only the organizer can change an event');
    if (current.status !== 'scheduled')
      throw new AppError('invalid_state', `An event that is ${current.status} cannot be changed`);
    const changes: Parameters<EventRepository['update']>[2] = {};
    if (cmd.name !== undefined) changes.name = cmd.name;
    if (cmd.description !== undefined) changes.description = cmd.description;
    if (cmd.startAt || cmd.endAt)
      Object.assign(
        changes,
        checkDates(cmd.startAt ?? current.startAt.toISOString(), cmd.endAt ?? current.endAt.toISOString()),
      );
    if (cmd.participants) changes.participants = await this.resolveParticipants(p.tenant, me, cmd.participants);
    if (cmd.waitingRoom !== undefined) changes.waitingRoom = cmd.waitingRoom;
    if (cmd.attachments) changes.attachments = await this.resolveAttachments(p, cmd.attachments);
    const updated = await this.deps.events(p.tenant).update(current._id, me, changes);
    if (!updated) throw new AppError('invalid_state', 'The event changed state while it was being updated');
    this.forgetPageKeys(p.tenant);
    await this.audited(p, 'event.update', String(current._id), { changed: Object.keys(changes).sort() });
    return updated;
  }

  /**
   * Cancels each event the caller organizes that is still scheduled; reports the others per id.
   * When no listed event exists for the caller at all, answers event_not_found (404).
   */
  async cancel(p: Principal, cmd: DeleteEventsCommand): Promise<CancelResult> {
    const me = oid(p.userId, 'event_not_found');
    const repo = this.deps.events(p.tenant);
    const out: CancelResult = { cancelled: [], failed: [] };
    for (const eventId of [...new Set(cmd.eventIds.map((s) => s.toLowerCase()))]) {
      const e = await repo.findVisible(oid(eventId, 'event_not_found'), me);
      if (!e || !e.organizerId.equals(me)) {
        out.failed.push({ eventId, code: 'event_not_found' });
        continue;
      }
      const done = await repo.transition(
        e._id,
        sourcesOf('cancelled'),
        'cancelled',
        { cancelledAt: new Date(), cancelReason: cmd.reason },
        (now) => [announce('consultation.cancelled', eventId, consultationData(now))],
      );
      if (done) {
        await this.deps.announced?.(p.tenant, { source: 'Event', ids: [e._id] });
        out.cancelled.push(eventId);
        await this.audited(p, 'event.cancel', eventId, cmd.reason ? { reason: cmd.reason } : {});
      } else out.failed.push({ eventId, code: 'invalid_state' });
    }
    if (!out.cancelled.length && out.failed.every((f) => f.code === 'event_not_found'))
      throw new AppError('event_not_found', 'None of the events exist');
    return out;
  }

  /** One audit entry of a scheduling action, by the caller (the impersonator while impersonating). */
  private async audited(p: Principal, action: string, eventId: string, details: Record<string, unknown>) {
    await this.deps.audit?.record(p.tenant, {
      action,
      outcome: 'success',
      actorId: p.actorUserId ?? p.userId,
      eventId,
      details: { ...details, ...(p.actorUserId ? { onBehalfOf: p.userId } : {}) },
    });
  }

  private async resolveParticipants(
    tenant: string,
    organizerId: Types.ObjectId,
    list: CreateEventCommand['participants'],
  ): Promise<NewEvent['participants']> {
    const known = await this.deps.users(tenant).existingActiveIds(oids(list.map((x) => x.userId)));
    const errors: FieldError[] = [];
    list.forEach((x, i) => {
      if (!known.has(x.userId.toLowerCase()))
        errors.push({ field: `participants.${i}.userId`, message: 'no active user with this id' });
    });
    if (errors.length)
      throw new AppError('validation_failed', `${errors[0]!.field}: ${errors[0]!.message}`, { errors });
    const out = new Map<string, NewEvent['participants'][number]>([
      [String(organizerId), { userId: organizerId, role: 'host' }],
    ]);
    for (const x of list) {
      const key = x.userId.toLowerCase();
      if (!out.has(key)) out.set(key, { userId: oid(key), role: x.role });
    }
    return [...out.values()];
  }

  /** Attachments are MediaFile ids the caller may read; any other id reads as unknown (no oracle). */
  private async resolveAttachments(p: Principal, ids: string[]): Promise<NewEvent['attachments']> {
    const files = await this.deps.events(p.tenant).findMediaFiles(oids(ids));
    const readable = new Map<string, boolean>();
    for (const f of files) if (!readable.has(f.hash)) readable.set(f.hash, await this.deps.canReadMedia(p, f.hash));
    const byId = new Map(files.filter((f) => readable.get(f.hash)).map((f) => [String(f._id), f]));
    const errors: FieldError[] = [];
    ids.forEach((id, i) => {
      if (!byId.has(id.toLowerCase()))
        errors.push({ field: `attachments.${i}`, message: 'no uploaded file with this id' });
    });
    if (errors.length)
      throw new AppError('validation_failed', `${errors[0]!.field}: ${errors[0]!.message}`, { errors });
    return [...new Set(ids.map((s) => s.toLowerCase()))].map((id) => {
      const f = byId.get(id)!;
      return { mediaFileId: f._id, name: f.fileName, hash: f.hash };
    });
  }
}

function checkDates(startAt: string, endAt: string): { startAt: Date; endAt: Date } {
  const s = new Date(startAt);
  const e = new Date(endAt);
  if (!(e > s))
    throw new AppError('validation_failed', 'endAt: must be after startAt', {
      errors: [{ field: 'endAt', message: 'must be after startAt' }],
    });
  if (e.getTime() - s.getTime() > MAX_EVENT_HOURS * 3_600_000) {
    throw new AppError('validation_failed', `endAt: an event lasts at most ${MAX_EVENT_HOURS} hours`, {
      errors: [{ field: 'endAt', message: `an event lasts at most ${MAX_EVENT_HOURS} hours` }],
    });
  }
  return { startAt: s, endAt: e };
}
