import type { Services, NodeActors } from '../app/index.js';
import type { Infra } from '../app/index.js';
import type { JobQueues } from '../data/job-queues.js';
import type { VideoConferencing } from '../vcs/vcs.port.js';
import { TenantRepository } from '../data/repositories/tenant.repository.js';
import { TenantService } from '../core/tenants/tenant.service.js';
import type { PresenceService } from '../core/directory/presence.service.js';
import type { AdminService } from '../core/tenants/admin.service.js';
import type { WebAppUrls } from '../core/tenants/web-app-urls.js';
import type { ContactDirectory } from '../data/search/contact-directory.js';
import type { DirectoryScope } from '../core/directory/directory-scope.js';
import type { ContactService } from '../core/directory/contact.service.js';
import type { GroupService } from '../core/directory/group.service.js';
import type { NoticeService } from '../core/directory/notice.service.js';
import type { EventService } from '../core/meetings/event.service.js';
import type { MeetingService } from '../core/meetings/meeting.service.js';
import type { CallService } from '../core/meetings/call.service.js';
import type { PeripheralService } from '../core/meetings/peripheral.service.js';
import type { RecordingService } from '../core/meetings/recording.service.js';
import { RecordingConsentService } from '../core/meetings/recording-consent.service.js';
import { EventRepository } from '../data/repositories/event.repository.js';
import type { CompletionService } from '../core/meetings/completion.service.js';
import type { MediaService } from '../core/media/media.service.js';
import type { MediaAccess } from '../core/media/media-access.js';
import type { RecordsService } from '../core/media/records.service.js';
import type { ImportService } from '../core/media/import.service.js';
import type { ActivationService } from '../core/media/activation.service.js';
import type { TelemetryIngestService } from '../core/meetings/telemetry-ingest.service.js';
import { TenantSettingsService } from '../core/tenants/tenant-settings.service.js';
import { TenantConfigRepository } from '../data/repositories/tenant-config.repository.js';
import type { AuthServices } from '../app/index.js';
import { createAuthServices } from './auth.wiring.js';
import { createTelemetryServices } from './telemetry.wiring.js';
import { createDirectoryServices } from './directory.wiring.js';
import { createMediaServices } from './media.wiring.js';
import { MeetingRooms } from '../actors/meeting/meeting-rooms.js';
import { AuditCheckpointer } from '../core/audit/audit-checkpointer.js';
import { AuditCheckpointTurnStore } from '../data/stores/audit-checkpoint-turn.store.js';
import type { WebhookServices } from '../app/index.js';
import { createWebhookServices } from './webhooks.wiring.js';
import type { AnnounceHook } from '../core/webhooks/webhook-events.js';
import type { ActorSystem } from '../actors/runtime/types.js';
import type { DeviceRegistrationService } from '../core/directory/device-registration.service.js';

/**
 * The composition root: every service, wired from infra, once per process. `actors` is the node's actor
 * client, resolved on use (src/composition/role-links.ts: the roles start after the services); a process
 * that runs no role (a command) has none, and meetingRooms answers `service_unavailable`.
 */
export function createServices(infra: Infra, links: NodeActors = NO_ROLES): Services {
  const catalog = new TenantRepository(infra.mongo.catalog);
  const auth = createAuthServices(infra);
  const tenants = new TenantService({ mongo: infra.mongo, tenants: catalog, audit: auth.audit });
  const webhooks = createWebhookServices(
    infra,
    async () => (await catalog.list()).map((t) => t.name),
    auth.vault,
    auth.audit,
  );
  const announced: AnnounceHook = (tenant, written) => webhooks.relay.publishNow(tenant, written);
  const meetingRooms = new MeetingRooms({
    eventIdForCode: (t, code) => directory.meetings.eventIdForCode(t, code),
    actors: links.actorClient,
  });
  const telemetry = createTelemetryServices(infra, tenants, catalog, auth.audit, meetingRooms, announced);
  const directory = createDirectoryServices(infra, { vcs: () => telemetry.vcs, announced, audit: auth.audit });
  return {
    tenants,
    auth,
    ...directory,
    meetingRooms,
    recordingConsent: new RecordingConsentService({
      events: (t) => new EventRepository(infra.mongo.tenantDb(t)),
      // Read now, not from the cache of the join path: a consent policy holds on every node once it is set.
      meetingSettings: (t) => directory.admin.meetingSettings(t, { fresh: true }),
      audit: auth.audit,
    }),
    tenantSettings: new TenantSettingsService({
      settings: (t) => new TenantConfigRepository(infra.mongo.tenantDb(t)),
      admin: directory.admin,
      rules: auth.rules,
      caches: [directory.admin, auth.rules, directory.webApp],
      audit: auth.audit,
    }),
    ...telemetry,
    ...createMediaServices(infra, { accountSetup: auth.accountSetup, announced, audit: auth.audit }),
    webhooks,
    auditCheckpoints: auditCheckpoints(infra, tenants, auth.audit),
  };
}

const NO_ROLES: NodeActors = { actorClient: () => undefined };

/** Signs on the node that claims each period's turn (AUDIT_CHECKPOINT_INTERVAL_SECONDS; 0: never started). */
function auditCheckpoints(infra: Infra, tenants: TenantService, audit: AuthServices['audit']): AuditCheckpointer {
  const turn = new AuditCheckpointTurnStore({ redis: infra.redis, keys: infra.keys });
  return new AuditCheckpointer({
    audit,
    tenants: async () => (await tenants.list()).filter((t) => t.status === 'active').map((t) => t.name),
    claimTurn: (ttlMs) => turn.claim(infra.config.nodeId, ttlMs),
    intervalMs: infra.config.audit.checkpointIntervalSeconds * 1000,
    logger: infra.logger,
  });
}
