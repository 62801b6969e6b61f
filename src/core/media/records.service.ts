import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { EventRecord, EventRepository } from '../../data/repositories/event.repository.js';
import type { MediaFileRecord, MediaFileRepository } from '../../data/repositories/media-file.repository.js';
import type {
  ParticipantLogRecord,
  ParticipantLogRepository,
} from '../../data/repositories/participant-log.repository.js';
import type { CallRecordRepository } from '../../data/repositories/call-record.repository.js';
import { AppError } from '../../kernel/errors.js';
import { MEDIA_ADMIN_PERMISSION } from './media-access.js';
import { oid } from '../../kernel/object-id.js';
import { clampTake, type Page, type Paging } from '../../kernel/paging.js';
import type { AuditService } from '../audit/audit.service.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';

export interface RecordsDeps {
  events: (tenant: string) => Pick<EventRepository, 'findById' | 'findVisible'>;
  files: (tenant: string) => Pick<MediaFileRepository, 'pageForEvent' | 'pageForSession'>;
  ledger: (tenant: string) => Pick<ParticipantLogRepository, 'page'>;
  calls: (tenant: string) => Pick<CallRecordRepository, 'isMember' | 'exists'>;
  pageMaxTake: number;
  /** The tenant's audit trail: each read of a consultation's ledger (who attended) is recorded (docs/audit.md). */
  audit?: AuditRecorder & Partial<Pick<AuditService, 'list'>>;
}

/** A stored file as the lists hand it to presenters. */
export type StoredFile = MediaFileRecord;

/** A ledger row with the event it belongs to (the device of a headset participant comes from the event). */
export interface LedgerView {
  row: ParticipantLogRecord;
  event: EventRecord;
}

/** A file of an event with how it came to belong there: its recording, uploaded for it, or only attached. */
export interface EventFileView {
  file: MediaFileRecord;
  source: 'recording' | 'upload' | 'attachment';
  attached: boolean;
}

/**
 * What the service recorded about a consultation, read back (decision 940): the ledger (participant
 * logs written by telemetry completion) for the event's hosts and tenant administrators, and the files
 * of an event or a call session for whoever the media access rule (decision 112) lets read them.
 * Not being able to see an event or session is answered like its absence (no oracle).
 */
export class RecordsService {
  constructor(private readonly deps: RecordsDeps) {}

  /** The ledger, in join order; hosts of the event and tenant:admin only (not_meeting_host otherwise). */
  async ledger(p: Principal, eventId: string, paging: Paging): Promise<Page<LedgerView>> {
    const event = await this.reachableEvent(p, eventId);
    if (!isAdmin(p) && !isHost(event, p.userId) && !(await this.madeHost(p.tenant, String(event._id), p.userId)))
      throw new AppError('not_meeting_host', 'Only a host of the event or an administrator reads its ledger');
    const page = clampTake(paging, this.deps.pageMaxTake);
    const { items, total } = await this.deps.ledger(p.tenant).page(String(event._id), page);
    await recordBy(this.deps.audit, p, 'ledger.read', {
      eventId: String(event._id),
      details: { rows: items.length, total, ...page },
    });
    return { items: items.map((row) => ({ row, event })), total, ...page };
  }

  /** The event's files: uploaded with its id, its recordings and its attachments, newest first. */
  async eventFiles(p: Principal, eventId: string, paging: Paging): Promise<Page<EventFileView>> {
    return this.filesOf(p, await this.reachableEvent(p, eventId), paging);
  }

  /** The files of an event already read by the caller (the event details). */
  async filesOf(p: Principal, event: EventRecord, paging: Paging): Promise<Page<EventFileView>> {
    const page = clampTake(paging, this.deps.pageMaxTake);
    const attached = new Set(event.attachments.map((a) => String(a.mediaFileId)));
    const { items, total } = await this.deps.files(p.tenant).pageForEvent(
      event._id,
      event.attachments.map((a) => a.mediaFileId),
      page,
    );
    const source = (f: MediaFileRecord): EventFileView['source'] =>
      f.kind === 'recording' ? 'recording' : f.eventId?.equals(event._id) ? 'upload' : 'attachment';
    const views = items.map((file) => ({ file, source: source(file), attached: attached.has(String(file._id)) }));
    return { items: views, total, ...page };
  }

  /**
   * A call session's files. Members of the call (caller, participants) and tenant:admin read them all;
   * anyone else only the ones they uploaded into it, and a session with none of those is `call_not_found`.
   */
  async sessionFiles(p: Principal, sessionId: string, paging: Paging): Promise<Page<MediaFileRecord>> {
    const page = clampTake(paging, this.deps.pageMaxTake);
    const calls = this.deps.calls(p.tenant);
    const me = Types.ObjectId.isValid(p.userId) ? new Types.ObjectId(p.userId) : undefined;
    const all = isAdmin(p) || (me !== undefined && (await calls.isMember(sessionId, me)));
    const { items, total } = await this.deps.files(p.tenant).pageForSession(sessionId, page, all ? undefined : me);
    if (!total && !(all && (await calls.exists(sessionId))))
      throw new AppError('call_not_found', 'No such session among yours');
    return { items, total, ...page };
  }

  /**
   * Whether the user was made a host in the event's meeting (addHost, transferHost, or a granted request
   * for host access, decision 900): the meeting actor records each grant in the audit trail inside its
   * turn, before acknowledging it, so the trail is the durable record of who hosted the meeting.
   */
  private async madeHost(tenant: string, eventId: string, userId: string): Promise<boolean> {
    const audit = this.deps.audit;
    if (!audit?.list) return false;
    const entries = await audit.list(tenant, { eventId, subjectId: userId }, 500);
    return entries.some(
      (e) =>
        e.outcome === 'success' &&
        (e.action === 'meeting.add_host' ||
          e.action === 'meeting.transfer_host' ||
          (e.action === 'meeting.host_access_answer' &&
            (e.details as { answer?: string } | undefined)?.answer === 'granted')),
    );
  }

  /** The event when the caller is a member of it or an administrator; event_not_found otherwise. */
  private async reachableEvent(p: Principal, eventId: string): Promise<EventRecord> {
    const id = oid(eventId, 'event_not_found');
    const repo = this.deps.events(p.tenant);
    const event = isAdmin(p) ? await repo.findById(id) : await repo.findVisible(id, oid(p.userId, 'event_not_found'));
    if (!event) throw new AppError('event_not_found', `No event ${eventId}`);
    return event;
  }
}

function isAdmin(p: Principal): boolean {
  return p.permissions.has(MEDIA_ADMIN_PERMISSION);
}

function isHost(e: EventRecord, userId: string): boolean {
  return (
    String(e.organizerId) === userId || e.participants.some((x) => x.role === 'host' && String(x.userId) === userId)
  );
}
