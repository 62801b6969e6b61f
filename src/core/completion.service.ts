import type { Logger } from 'pino';
import { AppError } from './errors.js';
import { oid } from './object-id.js';
import { sourcesOf } from './event-status.js';
import type { PushPublisher } from '../realtime/pushes.js';
import type { EventRepository, EventRecord } from '../data/repositories/event.repository.js';
import type { TelemetryRepository, TelemetryRecord } from '../data/repositories/telemetry.repository.js';
import type { ParticipantLogRepository, LedgerEntry } from '../data/repositories/participant-log.repository.js';
import type { TelemetryCompletionJobData } from './job-definitions.js';
import { announce, type AnnounceHook } from './webhooks/webhook-events.js';
import { consultationData } from './webhooks/consultation-events.js';
import type { AuditService } from './audit.service.js';

interface Deps {
  /** Refuses an unknown or suspended tenant (tenant_not_found) before its data is touched. */
  tenants: { require(name: string): Promise<unknown> };
  /** Per-tenant repositories (factories of the composition root). */
  events(tenant: string): EventRepository;
  telemetry(tenant: string): TelemetryRepository;
  ledger(tenant: string): ParticipantLogRepository;
  publisher: PushPublisher;
  /** Room of an event's meeting (src/realtime/rooms.ts). */
  meetingRoom(tenant: string, eventId: string): string;
  logger: Logger;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: a consultation completed from its telemetry is recorded (docs/audit.md). */
  audit?: Pick<AuditService, 'record' | 'list'>;
}

export interface CompletionResult {
  eventId: string;
  completed: boolean;
  status: string;
  ledgerEntries: number;
  /** Recording consent answers of the event, kept with the ledger rows of those who gave them. */
  recordingConsents: number;
  flags: { hasLedger: boolean; hasRecording: boolean; hasChat: boolean };
}

/**
 * Turns a conference's stored telemetry into the event's outcome: the ledger (participant logs,
 * upserted by natural key), the flags, and the move to `completed` by a guarded update. Running it
 * again with the same telemetry writes the same rows and finds the event already completed, so it
 * changes nothing and pushes nothing.
 */
export class CompletionService {
  constructor(private readonly deps: Deps) {}

  /**
   * Records the completion once: by the run that moved the event, or by a later run when the one that
   * moved it stopped before recording (a retried job finds the event completed and no entry).
   */
  private async audited(d: TelemetryCompletionJobData, r: CompletionResult, changed: boolean): Promise<void> {
    const audit = this.deps.audit;
    if (!audit || r.status !== 'completed') return;
    if (!changed && (await audit.list(d.tenant, { action: 'telemetry.complete', eventId: d.eventId }, 1)).length)
      return;
    await audit.record(d.tenant, {
      action: 'telemetry.complete',
      outcome: 'success',
      eventId: d.eventId,
      details: { conferenceId: d.conferenceId, ledgerEntries: r.ledgerEntries, ...r.flags },
    });
  }

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
    const ledger = withConsents(buildLedger(records, end.occurredAt), event?.recordingConsents ?? []);
    await this.deps.ledger(d.tenant).upsertMany(d.eventId, d.conferenceId, ledger);
    await progress(50);
    const flags = {
      hasLedger: ledger.length > 0,
      hasRecording: records.some((r) => r.type === 'recording_started'),
      hasChat: records.some(
        (r) => r.type === 'chat_activity' && Number((r.payload as { messageCount?: number }).messageCount ?? 0) > 0,
      ),
    };
    const done = await this.transition(
      d.tenant,
      d.eventId,
      { startedAt: records[0]!.occurredAt, endedAt: end.occurredAt },
      flags,
    );
    await progress(100);
    const result: CompletionResult = {
      eventId: d.eventId,
      completed: done.changed,
      status: done.event.status,
      ledgerEntries: ledger.length,
      recordingConsents: event?.recordingConsents?.length ?? 0,
      flags: pickFlags(done.event),
    };
    if (done.changed) this.push(d.tenant, d.eventId, result);
    await this.audited(d, result, done.changed);
    await this.deps.announced?.(d.tenant);
    this.deps.logger.info(
      { component: 'completion', tenant: d.tenant, eventId: d.eventId, changed: done.changed, entries: ledger.length },
      'completion applied',
    );
    return result;
  }

  /** scheduled -> started -> completed through guarded updates; flags are only ever raised. */
  private async transition(
    tenant: string,
    eventId: string,
    at: { startedAt: Date; endedAt: Date },
    flags: CompletionResult['flags'],
  ): Promise<{ changed: boolean; event: EventRecord }> {
    const events = this.deps.events(tenant);
    const id = oid(eventId, 'event_not_found');
    const raise = Object.fromEntries(Object.entries(flags).filter(([, v]) => v));
    await events.transition(id, ['scheduled'], 'started', { startedAt: at.startedAt }, (now) => [
      announce('consultation.started', eventId, consultationData(now)),
    ]);
    // An end already recorded (endMeeting, by this service's clock like the start) is kept. Otherwise the
    // end comes from the conference's clock while the start may come from this service's (initEvent): when
    // the two disagree, the event ends when it started, never before.
    const before = await events.findById(id);
    const started = before?.startedAt;
    const endedAt = before?.endedAt ?? (started && started > at.endedAt ? started : at.endedAt);
    const moved = await events.transition(
      id,
      sourcesOf('completed'),
      'completed',
      { ...raise, endedAt, completedAt: new Date() },
      (now) => [announce('consultation.completed', eventId, consultationData(now))],
    );
    if (moved) return { changed: true, event: moved };
    await this.deps.telemetry(tenant).raiseEventFlags(eventId, raise);
    const current = await events.findById(id);
    if (!current) throw new AppError('event_not_found');
    return { changed: false, event: current };
  }

  /** meetingEvent in the hub's shape (docs/hub.md) without `seq`: it does not come from the meeting actor. */
  private push(tenant: string, eventId: string, r: CompletionResult): void {
    try {
      const payload = {
        eventId,
        type: 'meetingCompleted' as const,
        at: new Date().toISOString(),
        data: { status: r.status, ...r.flags },
      };
      this.deps.publisher.emit(this.deps.meetingRoom(tenant, eventId), 'meetingEvent', payload);
    } catch (err) {
      this.deps.logger.warn({ component: 'completion', err: (err as Error).message }, 'meetingEvent push failed');
    }
  }
}

function pickFlags(e: EventRecord): CompletionResult['flags'] {
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
