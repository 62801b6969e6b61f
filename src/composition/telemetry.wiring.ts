import type { Infra } from '../app/index.js';
import { TenantConfigRepository } from '../data/repositories/tenant-config.repository.js';
import { EventRepository } from '../data/repositories/event.repository.js';
import { MediaFileRepository } from '../data/repositories/media-file.repository.js';
import { TelemetryRepository } from '../data/repositories/telemetry.repository.js';
import { ParticipantLogRepository } from '../data/repositories/participant-log.repository.js';
import type { TenantRepository } from '../data/repositories/tenant.repository.js';
import type { TenantService } from '../core/tenants/tenant.service.js';
import { RecordingService } from '../core/meetings/recording.service.js';
import { RecordingStateStore } from '../data/stores/recording-state.store.js';
import type { AuditService } from '../core/audit/audit.service.js';
import { CompletionService, type CompletionMeetings } from '../core/meetings/completion.service.js';
import { createVcs } from '../vcs/index.js';
import { TelemetryIngestService } from '../core/meetings/telemetry-ingest.service.js';
import type { AnnounceHook } from '../core/webhooks/webhook-events.js';

/**
 * Services of the jobs/telemetry area for createServices: `jobs` (typed enqueue API), `vcs`
 * (the video conferencing port per VCS_ADAPTER), `recording`, `completion` and the `telemetry`
 * ingest. `meetings`: the meeting actors (the completion is a turn of the event's meeting actor).
 */
export function createTelemetryServices(
  infra: Infra,
  tenants: TenantService,
  tenantRepo: TenantRepository,
  audit: AuditService,
  meetings: CompletionMeetings,
  announced?: AnnounceHook,
) {
  const jobs = infra.queues;
  const vcs = createVcs(infra.config, { redis: infra.redis, keys: infra.keys });
  const db = (t: string) => infra.mongo.tenantDb(t);
  const repos = {
    events: (t: string) => new EventRepository(db(t)),
    files: (t: string) => new MediaFileRepository(db(t)),
    telemetry: (t: string) => new TelemetryRepository(db(t)),
    ledger: (t: string) => new ParticipantLogRepository(db(t)),
  };
  const recording = new RecordingService({
    tenants,
    ...repos,
    state: new RecordingStateStore({ redis: infra.redis, keys: infra.keys }),
    vcs,
    store: infra.store,
    enqueue: (data) => jobs.enqueue('recording', data),
    logger: infra.logger,
    audit,
    announced,
    consentPolicy: async (t) =>
      (await new TenantConfigRepository(infra.mongo.tenantDb(t)).settings())?.meetings?.recordingConsent ?? 'off',
  });
  const completion = new CompletionService({
    tenants,
    ...repos,
    meetings,
    logger: infra.logger,
    announced,
    audit,
  });
  const telemetry = new TelemetryIngestService({
    catalog: tenantRepo,
    tenants,
    records: (t) => new TelemetryRepository(infra.mongo.tenantDb(t)),
    enqueueCompletion: (data) => jobs.enqueue('telemetry-completion', data),
    logger: infra.logger,
    announced,
    events: repos.events,
  });
  return { jobs, vcs, recording, completion, telemetry };
}
