import type { Router } from 'express';
import type { Infra, Services } from '../../composition.js';
import { tenantRouter } from './tenant/tenant.router.js';
import { adminMigrateRouter } from './admin/admin.router.js';
import { mediaRouter, mediaAliasRouter } from './media/media.router.js';
import { sharedFilesRouter, containerFilesRouter } from './files/files.router.js';
import { uploadsRouter } from './uploads/uploads.router.js';
import { accountRouter, jwksRouter } from './account/account.router.js';
import { contactsRouter } from './contacts/contacts.router.js';
import { eventsRouter } from './events/events.router.js';
import { meetingsRouter } from './meetings/meetings.router.js';
import { notificationRouter } from './notification/notification.router.js';
import { peripheralRouter } from './peripheral/peripheral.router.js';
import { adminPresenceRouter } from './admin/presence.router.js';
import { recordingRouter } from './tenant/recording.router.js';
import { docsRouter } from '../openapi/docs.router.js';
import { graphqlRouter } from '../graphql/graphql.router.js';

/**
 * Every REST router and where it is mounted. Add one line per capability; keep routers thin.
 * Order matters only where two routers share a prefix.
 */
export function restRoutes(infra: Infra, services: Services): { path: string; router: Router }[] {
  return [
    { path: '/api/tenant', router: tenantRouter() },
    { path: '/api/admin', router: adminMigrateRouter(services, infra.config.auth.provisioningCode) },
    { path: '/api/media', router: mediaRouter(services.media) },
    { path: '/media', router: mediaAliasRouter(services.media) },
    { path: '/api/files', router: sharedFilesRouter(services.media) },
    { path: '/files', router: containerFilesRouter(services.media) },
    { path: '/api/uploads', router: uploadsRouter(services.imports) },
    { path: '/api/account', router: accountRouter(infra, services) },
    { path: '/api/contacts', router: contactsRouter(services) },
    { path: '/api/events', router: eventsRouter(services) },
    { path: '/api/meetings', router: meetingsRouter(services) },
    { path: '/api/notification', router: notificationRouter(services) },
    { path: '/api/peripheral', router: peripheralRouter(services) },
    { path: '/api/admin', router: adminPresenceRouter(services) },
    { path: '/api/tenant', router: recordingRouter(services) },
    { path: '/api/docs', router: docsRouter() },
    { path: '/graphql', router: graphqlRouter(services, infra.logger, { timeBudgetMs: infra.config.limits.graphqlTimeBudgetMs }) },
    { path: '/', router: jwksRouter(services) },
  ];
}
