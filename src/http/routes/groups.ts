import type { RouteGroup } from './route-spec.js';
import { healthRoutes } from './health.router.js';
import { tenantRoutes } from './tenant/tenant.router.js';
import { recordingRoutes } from './tenant/recording.router.js';
import { adminMigrateRoutes } from './admin/admin.router.js';
import { adminPresenceRoutes } from './admin/presence.router.js';
import { adminAuditRoutes } from './admin/audit.router.js';
import { adminPendingUserRoutes } from './admin/pending-users.router.js';
import { adminJobRoutes } from './admin/jobs.router.js';
import { adminTenantSettingsRoutes } from './admin/tenant-settings.router.js';
import { mediaRoutes, mediaAliasRoutes } from './media/media.router.js';
import { sharedFilesRoutes, containerFilesRoutes } from './files/files.router.js';
import { uploadsRoutes } from './uploads/uploads.router.js';
import { accountRoutes, jwksRoutes } from './account/account.router.js';
import { contactRoutes } from './contacts/contacts.router.js';
import { eventRoutes } from './events/events.router.js';
import { meetingRoutes } from './meetings/meetings.router.js';
import { notificationRoutes } from './notification/notification.router.js';
import { peripheralRoutes } from './peripheral/peripheral.router.js';
import { webhookRoutes } from './webhooks/webhooks.router.js';
import { sessionRoutes } from './sessions/sessions.router.js';

/** The probes, mounted by app.ts before tenant resolution and the per-address limit. */
export const PROBE_GROUPS: readonly RouteGroup[] = [healthRoutes];

/** Every REST route group served on tenant hosts, in mount order (groups sharing a base keep this order). */
export const API_GROUPS: readonly RouteGroup[] = [
  tenantRoutes,
  adminMigrateRoutes,
  mediaRoutes,
  mediaAliasRoutes,
  sharedFilesRoutes,
  containerFilesRoutes,
  uploadsRoutes,
  accountRoutes,
  contactRoutes,
  eventRoutes,
  meetingRoutes,
  sessionRoutes,
  notificationRoutes,
  peripheralRoutes,
  adminPresenceRoutes,
  adminAuditRoutes,
  adminPendingUserRoutes,
  adminJobRoutes,
  adminTenantSettingsRoutes,
  recordingRoutes,
  webhookRoutes,
  jwksRoutes,
];

/** Every declared REST operation: the router and the OpenAPI document are built from these. */
export const ALL_GROUPS: readonly RouteGroup[] = [...PROBE_GROUPS, ...API_GROUPS];
