import type { Infra } from './infra.js';
import type { JobQueues } from '../workers/job-queues.js';
import type { VideoConferencing } from '../vcs/vcs.port.js';
import { TenantRepository } from '../data/repositories/tenant.repository.js';
import { TenantService } from '../core/tenants/tenant.service.js';
import type { PresenceService } from '../core/directory/presence.service.js';
import type { AdminService } from '../core/tenants/admin.service.js';
import type { WebAppUrls } from '../core/tenants/web-app-urls.js';
import type { ContactDirectory } from '../core/directory/contact-directory.js';
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
import { createAuthServices, type AuthServices } from './auth.wiring.js';
import { createTelemetryServices } from './telemetry.wiring.js';
import { createDirectoryServices } from './directory.wiring.js';
import { createMediaServices } from './media.wiring.js';
import { MeetingRooms } from '../actors/meeting/meeting-rooms.js';
import { AuditCheckpointer } from '../core/audit/audit-checkpointer.js';
import { AuditCheckpointTurnStore } from '../data/stores/audit-checkpoint-turn.store.js';
import { createWebhookServices, type WebhookServices } from './webhooks.wiring.js';
import type { AnnounceHook } from '../core/webhooks/webhook-events.js';
import type { ActorSystem } from '../actors/runtime/types.js';
import type { DeviceRegistrationService } from '../core/directory/device-registration.service.js';

/**
 * Every service a transport, an actor or a job may use: what `createServices` builds. Transports receive
 * this object and never construct services, repositories or Redis clients themselves.
 */
export interface Services {
  /** The tenant catalog: provisioning, migrations, lookup by host. */
  tenants: TenantService;
  /** Identity and sessions: tokens, sign-in, sessions, accounts, realms, audit (auth.wiring.ts). */
  auth: AuthServices;

  // Directory and scheduling (directory.wiring.ts)
  presence: PresenceService;
  admin: AdminService;
  webApp: WebAppUrls;
  /** The in-memory contact directory, where the database cannot search by index (decision 212). */
  contactDirectory: ContactDirectory | undefined;
  directoryScope: DirectoryScope;
  contacts: ContactService;
  groups: GroupService;
  notices: NoticeService;
  events: EventService;
  meetings: MeetingService;
  /** The meeting actors for REST, GraphQL and the telemetry completion, through the node's actor client. */
  meetingRooms: MeetingRooms;
  /** Tenant administrators change the tenant's configuration and security rules, audited (decision 950). */
  tenantSettings: TenantSettingsService;
  /** Recording consent: the tenant's policy, answers stored with the event and audited (decision 910). */
  recordingConsent: RecordingConsentService;
  calls: CallService;
  peripherals: PeripheralService;
  /** Which device account may claim which hardware id (decision 1041). */
  deviceRegistrations: DeviceRegistrationService;

  // Conferences and telemetry (telemetry.wiring.ts)
  /** Enqueues jobs (src/core/meetings/job-definitions.ts). */
  jobs: JobQueues;
  /** The video conferencing system's port. */
  vcs: VideoConferencing;
  recording: RecordingService;
  completion: CompletionService;
  telemetry: TelemetryIngestService;

  // Media and imports (media.wiring.ts)
  media: MediaService;
  mediaAccess: MediaAccess;
  /** What was recorded about events and sessions, read back: the ledger and the files (decision 940). */
  records: RecordsService;
  imports: ImportService;
  /** Imported pending users made into users by an admin. */
  activation: ActivationService;

  /** Outbound events: subscriptions, the outbox relay and delivery (webhooks.wiring.ts). */
  webhooks: WebhookServices;
  /** The periodic signed checkpoint of every active tenant's audit chain (decision 881); workers nodes start it. */
  auditCheckpoints: AuditCheckpointer;
}

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
      meetingSettings: (t) => directory.admin.meetingSettings(t),
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

/** The node's actor client, resolved on use (RoleLinks.actorClient of src/composition/role-links.ts). */
export interface NodeActors {
  actorClient(): Pick<ActorSystem, 'ask'> | undefined;
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
