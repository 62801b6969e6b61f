// The application's shape: what the composition (src/composition) hands every transport, role, actor and job.
// Types only (a boundary rule keeps every import here type-only), so transports depend on this shape and
// never on the code that builds it (decision 1128).
import type { JobQueues } from '../data/job-queues.js';
import type { VideoConferencing } from '../vcs/vcs.port.js';
import type { TenantService } from '../core/tenants/tenant.service.js';
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
import type { RecordingConsentService } from '../core/meetings/recording-consent.service.js';
import type { CompletionService } from '../core/meetings/completion.service.js';
import type { MediaService } from '../core/media/media.service.js';
import type { MediaAccess } from '../core/media/media-access.js';
import type { RecordsService } from '../core/media/records.service.js';
import type { ImportService } from '../core/media/import.service.js';
import type { ActivationService } from '../core/media/activation.service.js';
import type { TelemetryIngestService } from '../core/meetings/telemetry-ingest.service.js';
import type { TenantSettingsService } from '../core/tenants/tenant-settings.service.js';
import type { MeetingRooms } from '../actors/meeting/meeting-rooms.js';
import type { AuditCheckpointer } from '../core/audit/audit-checkpointer.js';
import type { ActorSystem } from '../actors/runtime/types.js';
import type { DeviceRegistrationService } from '../core/directory/device-registration.service.js';
import type { WebhookSubscriptionService } from '../core/webhooks/webhook-subscription.service.js';
import type { OutboxRelayService } from '../core/webhooks/outbox-relay.service.js';
import type { WebhookDeliveryService } from '../core/webhooks/webhook-delivery.service.js';
import type { AuthServices } from './auth-services.js';

/** Outbound events: the administrators' API, the relay from the outboxes, and delivery. */
export interface WebhookServices {
  subscriptions: WebhookSubscriptionService;
  relay: OutboxRelayService;
  delivery: WebhookDeliveryService;
}

/**
 * Every service a transport, an actor or a job may use: what `createServices` (src/composition/services.ts) builds. Transports receive
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
  /** Enqueues jobs (src/contracts/job-definitions.ts). */
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

/** The node's actor client, resolved on use (RoleLinks.actorClient of src/composition/role-links.ts). */
export interface NodeActors {
  actorClient(): Pick<ActorSystem, 'ask'> | undefined;
}
