import type { Router } from 'express';
import type { Infra, Services } from '../../composition.js';
import { tenantRouter } from './tenant/tenant.router.js';
import { adminMigrateRouter } from './admin/admin.router.js';
import { accountRouter, jwksRouter } from './account/account.router.js';

/**
 * Every REST router and where it is mounted. Add one line per capability; keep routers thin.
 * Order matters only where two routers share a prefix.
 */
export function restRoutes(infra: Infra, services: Services): { path: string; router: Router }[] {
  return [
    { path: '/api/tenant', router: tenantRouter() },
    { path: '/api/admin', router: adminMigrateRouter(services, infra.config.auth.provisioningCode) },
    { path: '/api/account', router: accountRouter(infra, services) },
    { path: '/', router: jwksRouter(services) },
  ];
}
