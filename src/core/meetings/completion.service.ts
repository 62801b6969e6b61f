import type { Logger } from 'pino';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';
import { sourcesOf } from './event-status.js';
import type { EventRepository, EventRecord } from '../../data/repositories/event.repository.js';
import type { TelemetryRepository, TelemetryRecord } from '../../data/repositories/telemetry.repository.js';
import type { ParticipantLogRepository, LedgerEntry } from '../../data/repositories/participant-log.repository.js';
import type { TelemetryCompletionJobData } from '../../contracts/job-definitions.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { consultationData } from '../webhooks/consultation-events.js';
import type { AuditService } from '../audit/audit.service.js';

/** The completion flags of an event (only ever raised). */
export interface CompletionFlags {
  hasLedger: boolean;
  hasRecording: boolean;
  hasChat: boolean;
}

/** What the conference's telemetry says of its end: the meeting actor's completion turn applies it. */
export interface EventCompletion {
  conferenceId: string;
  /** The conference's first and last record (ISO), by the conference's clock. */
  startedAt: string;
  endedAt: string;
  flags: CompletionFlags;
  ledgerEntries: number;
}

/** The event after a completion: whether this one moved it to `completed`, its status and flags. */
export interface EventCompleted {
  changed: boolean;
  status: string;
  flags: CompletionFlags;
}

/** The answer of the meeting actor's completion turn. */
export interface MeetingCompleted extends EventCompleted {
  /** The meetingEvent sequence number after the turn. */
  seq: number;
}

/**
 * The event's meeting actor (src/actors/meeting/meeting-rooms.ts): its completion turn ends the meeting for
 * everyone, moves the event (closeEvent below), tells and audits once (decision 1090).
 */
export interface CompletionMeetings {
  complete(tenant: string, eventId: string, c: EventCompletion): Promise<MeetingCompleted>;
}

interface Deps {
  /** Refuses an unknown or suspended tenant (tenant_not_found) before its data is touched. */
  tenants: { require(name: string): Promise<unknown> };
  /** Per-tenant repositories (factories of the composition root). */
  events(tenant: string): EventRepository;
  telemetry(tenant: string): TelemetryRepository;
  ledger(tenant: string): ParticipantLogRepository;
  meetings: CompletionMeetings;
  logger: Logger;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: whether a consultation's completion was recorded (docs/audit.md). */
  audit: Pick<AuditService, 'list'>;
}

export interface CompletionResult {
  eventId: string;
  completed: boolean;
  status: string;
  ledgerEntries: number;
  /** Recording consent answers of the event, kept with the ledger rows of those who gave them. */
  recordingConsents: number;
  flags: CompletionFlags;
}

/**
 * Turns a conference's stored telemetry into the event's outcome: the ledger (participant logs,
 * upserted by natural key) here, then the meeting actor's completion turn, which ends the meeting for
 * everyone in it and moves the event to `completed` (closeEvent) by a guarded update. Running it again
 * with the same telemetry writes the same rows and finds the meeting completed, so it changes nothing
 * and pushes nothing.
 */
export class CompletionService {
  constructor(private readonly deps: Deps) {}

  async complete(
    d: TelemetryCompletionJobData,
    progress: (p: number) => Promise<void> = async () => undefined,
  ): Promise<CompletionResult> {
    await this.deps.tenants.require(d.tenant);
    const records = (await this.deps.telemetry(d.tenant).listForConference(d.conferenceId)).filter(
      (r) => r.eventId.toHexString() === d.eventId,
    );
    const end = records.find((r) => r.type === 'conference_ended');
    if (!end) throw new AppError('invalid_state', 'The conference has not ended');
    const event = await this.deps.events(d.tenant).findById(oid(d.eventId, 'event_not_found'));
    if (!event) throw new AppError('event_not_found', `No event ${d.eventId}`);
    const ledger = withConsents(buildLedger(records, end.occurredAt), event.recordingConsents ?? []);
    await this.deps.ledger(d.tenant).upsertMany(d.eventId, d.conferenceId, ledger);
    await progress(50);
    const flags = {
      hasLedger: ledger.length > 0,
      hasRecording: records.some((r) => r.type === 'recording_started'),
      hasChat: records.some(
        (r) => r.type === 'chat_activity' && Number((r.payload as { messageCount?: number }).messageCount ?? 0) > 0,
      ),
    };
    const done = await this.deps.meetings.complete(d.tenant, d.eventId, {
      conferenceId: d.conferenceId,
      startedAt: records[0]!.occurredAt.toISOString(),
      endedAt: end.occurredAt.toISOString(),
      flags,
      ledgerEntries: ledger.length,
    });
    await progress(100);
    await this.deps.announced?.(d.tenant);
    this.deps.logger.info(
      { component: 'completion', tenant: d.tenant, eventId: d.eventId, changed: done.changed, entries: ledger.length },
      'completion applied',
    );
    return {
      eventId: d.eventId,
      completed: done.changed,
      status: done.status,
      ledgerEntries: ledger.length,
      recordingConsents: event.recordingConsents?.length ?? 0,
      flags: done.flags,
    };
  }

  /**
   * The event's move in the meeting actor's completion turn: scheduled -> started -> completed through
   * guarded updates; flags are only ever raised. An end already recorded (endMeeting, by this service's
   * clock like the start) is kept; otherwise the end comes from the conference's clock while the start
   * may come from this service's (initEvent): when the two disagree, the event ends when it started,
   * never before. The actor's turn orders it with endMeeting, so no end is written between the read and
   * the move.
   */
  async closeEvent(tenant: string, eventId: string, c: EventCompletion): Promise<EventCompleted> {
    const events = this.deps.events(tenant);
    const id = oid(eventId, 'event_not_found');
    const raise = Object.fromEntries(Object.entries(c.flags).filter(([, v]) => v));
    await events.transition(id, ['scheduled'], 'started', { startedAt: new Date(c.startedAt) }, (now) => [
      announce('consultation.started', eventId, consultationData(now)),
    ]);
    const before = await events.findById(id);
    if (!before) throw new AppError('event_not_found', `No event ${eventId}`);
    const end = new Date(c.endedAt);
    const started = before.startedAt;
    const endedAt = before.endedAt ?? (started && started > end ? started : end);
    const moved = await events.transition(
      id,
      sourcesOf('completed'),
      'completed',
      { ...raise, endedAt, completedAt: new Date() },
      (now) => [announce('consultation.completed', eventId, consultationData(now))],
    );
    if (moved) return { changed: true, status: moved.status, flags: pickFlags(moved) };
    await this.deps.telemetry(tenant).raiseEventFlags(eventId, raise);
    const current = await events.findById(id);
    if (!current) throw new AppError('event_not_found', `No event ${eventId}`);
    return { changed: false, status: current.status, flags: pickFlags(current) };
  }

  /**
   * Whether the consultation's completion is in the audit trail: a completion turn that moved the event
   * and then failed (its pushes and state discarded with it) left none, so the next one tells and records.
   */
  async audited(tenant: string, eventId: string): Promise<boolean> {
    return (await this.deps.audit.list(tenant, { action: 'telemetry.complete', eventId }, 1)).length > 0;
  }
}

function pickFlags(e: EventRecord): CompletionFlags {
  return { hasLedger: Boolean(e.hasLedger), hasRecording: Boolean(e.hasRecording), hasChat: Boolean(e.hasChat) };
}

/**
 * Puts each participant's recording consent answers (stored with the event, decision 910) on their
 * ledger rows, so the ledger says who was recorded with which consent.
 */
export function withConsents(
  ledger: LedgerEntry[],
  consents: readonly { userId: unknown; requestId: string; consent: boolean; at: Date; late?: boolean | null }[],
): LedgerEntry[] {
  return ledger.map((row) => {
    const mine = consents.filter((c) => row.userId && String(c.userId) === row.userId);
    if (!mine.length) return row;
    return {
      ...row,
      recordingConsents: mine.map((c) => ({
        requestId: c.requestId,
        consent: c.consent,
        at: new Date(c.at),
        late: !!c.late,
      })),
    };
  });
}

/**
 * Pairs joins and leaves per participant in sequence order. A second join while present is
 * ignored; a leave without a join is ignored; anyone still present leaves when the conference ends.
 */
export function buildLedger(
  records: readonly Pick<TelemetryRecord, 'type' | 'occurredAt' | 'payload'>[],
  endedAt: Date,
): LedgerEntry[] {
  const open = new Map<string, { joinedAt: Date; userId?: string; displayName?: string; device?: string }>();
  const out: LedgerEntry[] = [];
  const close = (key: string, leftAt: Date) => {
    const s = open.get(key)!;
    open.delete(key);
    const end = leftAt < s.joinedAt ? s.joinedAt : leftAt;
    out.push({
      participantKey: key,
      userId: s.userId,
      displayName: s.displayName,
      ...(s.device ? { device: s.device } : {}),
      joinedAt: s.joinedAt,
      leftAt: end,
      durationSeconds: Math.round((end.getTime() - s.joinedAt.getTime()) / 1000),
    });
  };
  for (const r of records) {
    const p = r.payload as { participantKey?: string; userId?: string; displayName?: string; device?: string };
    if (!p.participantKey) continue;
    if (r.type === 'participant_joined' && !open.has(p.participantKey))
      open.set(p.participantKey, {
        joinedAt: r.occurredAt,
        userId: p.userId || undefined,
        displayName: p.displayName || undefined,
        device: p.device || undefined,
      });
    if (r.type === 'participant_left' && open.has(p.participantKey)) close(p.participantKey, r.occurredAt);
  }
  for (const key of [...open.keys()]) close(key, endedAt);
  return out;
}
