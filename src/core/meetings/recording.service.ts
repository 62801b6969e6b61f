import type { Logger } from 'pino';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { layout } from '../../storage/layout.js';
import type { VcsRoom, VideoConferencing } from '../../vcs/vcs.port.js';
import type { RecordingJobData } from '../../contracts/job-definitions.js';
import type { EventRepository, EventRecord } from '../../data/repositories/event.repository.js';
import type { MediaFileRepository } from '../../data/repositories/media-file.repository.js';
import type { TelemetryRepository } from '../../data/repositories/telemetry.repository.js';
import type { AuditService } from '../audit/audit.service.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import type { RecordingState, RecordingStateStore } from '../../data/stores/recording-state.store.js';

export type { RecordingState };

/**
 * Who asked, for the audit trail: `actorId` is the caller; when it differs from the attributed user
 * (an administrator acting explicitly) the entry names both. `via` is the transport.
 */
export interface RecordingRequester {
  /** Who asked at the keyboard; absent when no person did (the conference's completion). */
  actorId?: string;
  /** `service`: part of another change (endMeeting stops what records); `telemetry`: the conference's completion. */
  via: 'rest' | 'hub' | 'service' | 'telemetry';
  ip?: string;
  /** The consent request everyone it asked agreed to; required when the tenant's recording needs consent (decision 910). */
  consented?: { requestId: string };
}

export interface RecordingStatus {
  eventId: string;
  state: RecordingState;
  session: number;
  jobId?: string;
}

interface Deps {
  /** Refuses an unknown or suspended tenant (tenant_not_found) before its data is touched. */
  tenants: { require(name: string): Promise<unknown> };
  /** Per-tenant repositories (factories of the composition root). */
  events(tenant: string): EventRepository;
  files(tenant: string): MediaFileRepository;
  telemetry(tenant: string): TelemetryRepository;
  /** Each event's recording sessions and their states, shared by every node. */
  state: RecordingStateStore;
  vcs: VideoConferencing;
  store: Pick<ObjectStore, 'putContentAddressed'>;
  enqueue(data: RecordingJobData): Promise<{ id: string }>;
  logger: Logger;
  audit: Pick<AuditService, 'record'>;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** TenantConfig `meetings.recordingConsent` (decision 910); absent = never asks. */
  consentPolicy?: (tenant: string) => Promise<string>;
}

/**
 * Recording control for an event's conference. Requests only record intent (in Redis, per event)
 * and enqueue the `recording` job; the job talks to the video conferencing system and, on stop,
 * stores the recording as media of the event and raises hasRecording. Each start/stop pair is a
 * numbered session, so job ids are derived from the work and retries never start a second recording.
 * The file is stored like any upload (content-addressed media), so the media download routes serve it.
 */
export class RecordingService {
  constructor(private readonly deps: Deps) {}

  /** Starts (or joins the running) recording of an event, attributed to `userId`; audited either way. */
  async requestStart(
    tenant: string,
    eventId: string,
    userId: string,
    by: RecordingRequester = { actorId: userId, via: 'service' },
  ): Promise<RecordingStatus> {
    return this.audited(tenant, 'recording.start', eventId, userId, by, async () => {
      const event = await this.requireEvent(tenant, eventId);
      if (event.status === 'completed' || event.status === 'cancelled')
        throw new AppError('invalid_state', `Event is ${event.status}`);
      oid(userId, 'user_not_found');
      if (!by.consented && (await this.consentPolicy(tenant)) !== 'off')
        throw new AppError(
          'recording_consent_required',
          'This tenant records only with the consent of those present: use the hub method startRecording, which asks them',
        );
      const { fresh, session } = await this.deps.state.start(tenant, eventId, userId);
      const job = await this.deps.enqueue({ tenant, eventId, userId, action: 'start', session });
      this.deps.logger.info({ component: 'recording', tenant, eventId, session, fresh }, 'recording start requested');
      return { eventId, state: 'starting', session, jobId: job.id };
    });
  }

  async requestStop(
    tenant: string,
    eventId: string,
    userId: string,
    by: RecordingRequester = { actorId: userId, via: 'service' },
  ): Promise<RecordingStatus> {
    return this.audited(tenant, 'recording.stop', eventId, userId, by, async () => {
      await this.requireEvent(tenant, eventId);
      oid(userId, 'user_not_found');
      const { outcome, session } = await this.deps.state.stop(tenant, eventId);
      if (outcome === 'idle') throw new AppError('invalid_state', 'The event is not being recorded');
      const job = await this.deps.enqueue({ tenant, eventId, userId, action: 'stop', session });
      return { eventId, state: 'stopping', session, jobId: job.id };
    });
  }

  /** Runs a recording request and writes its audit entry (success with the session, or failure with the code). */
  private async audited(
    tenant: string,
    action: 'recording.start' | 'recording.stop',
    eventId: string,
    userId: string,
    by: RecordingRequester,
    run: () => Promise<RecordingStatus>,
  ): Promise<RecordingStatus> {
    const entry = {
      action,
      actorId: by.actorId ? oidOrUndefined(by.actorId) : undefined,
      subjectId: oidOrUndefined(userId),
      // A field of its own, so filtering the trail by consultation finds recording starts and stops.
      eventId,
      ...(by.ip ? { ip: by.ip } : {}),
      details: {
        eventId,
        via: by.via,
        ...(by.actorId && by.actorId !== userId ? { onBehalfOf: userId } : {}),
        ...(by.consented ? { consentRequestId: by.consented.requestId } : {}),
      },
    };
    try {
      const r = await run();
      await this.deps.audit.record(tenant, {
        ...entry,
        outcome: 'success',
        details: { ...entry.details, session: r.session },
      });
      return r;
    } catch (e) {
      await this.deps.audit.record(tenant, {
        ...entry,
        outcome: 'failure',
        details: { ...entry.details, code: e instanceof AppError ? e.code : 'internal' },
      });
      throw e;
    }
  }

  async status(tenant: string, eventId: string): Promise<RecordingStatus> {
    await this.requireEvent(tenant, eventId);
    return { eventId, ...(await this.deps.state.status(tenant, eventId)) };
  }

  /** Who asked for the event's recording that is starting or running (it is theirs); null when none is. */
  async runningFor(tenant: string, eventId: string): Promise<string | null> {
    const { state, session } = await this.deps.state.status(tenant, eventId);
    if (state !== 'starting' && state !== 'recording') return null;
    return this.deps.state.requestedBy(tenant, eventId, session);
  }

  /** The `recording` job: idempotent per (event, session, action). */
  async runJob(d: RecordingJobData, progress: (p: number) => Promise<void>): Promise<Record<string, unknown>> {
    await this.deps.tenants.require(d.tenant);
    const events = this.deps.events(d.tenant);
    const event = await events.findById(oid(d.eventId, 'event_not_found'));
    if (!event) throw new AppError('event_not_found');
    const room = await this.roomOf(d.tenant, event, events);
    return d.action === 'start' ? this.start(d, room) : this.stop(d, room, progress);
  }

  private async start(d: RecordingJobData, room: VcsRoom): Promise<Record<string, unknown>> {
    const { state } = this.deps;
    const existing = await state.recordingId(d.tenant, d.eventId, d.session);
    if (existing) return { recordingId: existing };
    const rec = await this.deps.vcs.startRecording(d.tenant, room);
    if (!(await state.claimRecordingId(d.tenant, d.eventId, d.session, rec.recordingId))) {
      await this.deps.vcs.stopRecording(d.tenant, room, rec.recordingId);
      return { recordingId: await state.recordingId(d.tenant, d.eventId, d.session) };
    }
    await state.advance(d.tenant, d.eventId, d.session, 'starting', 'recording');
    return { recordingId: rec.recordingId, startedAt: rec.startedAt };
  }

  private async stop(d: RecordingJobData, room: VcsRoom, progress: (p: number) => Promise<void>) {
    const { state } = this.deps;
    const recordingId = await state.recordingId(d.tenant, d.eventId, d.session);
    if (!recordingId) throw new AppError('service_unavailable', 'Recording has not started yet; retrying');
    await progress(10);
    await this.deps.vcs.stopRecording(d.tenant, room, recordingId);
    await progress(50);
    const file = await this.deps.vcs.openRecording(d.tenant, room, recordingId);
    if (!file) throw new AppError('service_unavailable', 'Recording is still being finalized; retrying');
    const put = await this.deps.store.putContentAddressed(layout.mediaPrefix(d.tenant), file.body, {
      contentType: file.contentType,
    });
    await progress(80);
    const ownerId = (await state.requestedBy(d.tenant, d.eventId, d.session)) ?? d.userId;
    const { record } = await this.deps.files(d.tenant).createOnce({
      hash: put.sha256,
      size: put.size,
      contentType: file.contentType,
      fileName: file.fileName,
      extension: file.fileName.split('.').pop()?.toLowerCase() ?? 'bin',
      ownerId,
      eventId: d.eventId,
      clientRef: `recording.${recordingId}`,
      kind: 'recording',
      thumbnailStatus: 'none',
      outbox: (mediaFileId) => [
        announce('recording.available', d.eventId, {
          mediaFileId,
          recordingId,
          hash: put.sha256,
          contentType: file.contentType,
          size: put.size,
        }),
      ],
    });
    await this.deps.announced?.(d.tenant);
    await this.deps.telemetry(d.tenant).raiseEventFlags(d.eventId, { hasRecording: true });
    await state.advance(d.tenant, d.eventId, d.session, 'stopping', 'stopped');
    await progress(100);
    return { recordingId, mediaFileId: String(record._id), hash: put.sha256, size: put.size };
  }

  private async roomOf(tenant: string, event: EventRecord, events: EventRepository): Promise<VcsRoom> {
    if (event.room?.roomName && event.room.provider === this.deps.vcs.provider) {
      return { provider: event.room.provider, roomName: event.room.roomName, url: event.room.url ?? '' };
    }
    const room = await this.deps.vcs.createRoom(tenant, String(event._id));
    await events.setRoom(event._id, { ...room, assignedAt: new Date() });
    return room;
  }

  private async requireEvent(tenant: string, eventId: string): Promise<EventRecord> {
    await this.deps.tenants.require(tenant);
    const event = await this.deps.events(tenant).findById(oid(eventId, 'event_not_found'));
    if (!event) throw new AppError('event_not_found');
    return event;
  }

  /** TenantConfig `meetings.recordingConsent` (off when unset): checked on every start, whatever the transport. */
  private async consentPolicy(tenant: string): Promise<string> {
    return (await this.deps.consentPolicy?.(tenant)) ?? 'off';
  }
}

/** Audit ids are ObjectIds; a malformed id (refused by the request itself) is left out of the entry. */
function oidOrUndefined(id: string): string | undefined {
  return /^[0-9a-f]{24}$/i.test(id) ? id : undefined;
}
