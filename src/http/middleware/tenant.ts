import type { RequestHandler } from 'express';
import { AppError } from '../../kernel/errors.js';
import type { TenantService } from '../../core/tenants/tenant.service.js';
import type { Mongo } from '../../data/mongo.js';
import { enrichContext } from '../../observability/context.js';
import { tenantFromHost } from '../../edge/tenant-host.js';

/**
 * Resolves the tenant from the subdomain. A host naming an unknown tenant is answered 404 here,
 * before any route runs, so no handler can reach another tenant's data by accident.
 */
export function resolveTenant(tenants: TenantService, mongo: Mongo, baseDomain: string): RequestHandler {
  return async (req, _res, next) => {
    const name = tenantFromHost(req.get('host'), baseDomain);
    if (!name) return next();
    const tenant = await tenants.resolve(name);
    if (!tenant) throw new AppError('tenant_not_found', `No tenant for host '${req.get('host')}'`);
    req.tenant = tenant;
    req.tenantDb = mongo.tenantDb(tenant.name);
    enrichContext({ tenant: tenant.name });
    next();
  };
}

/** For routes that only make sense on a tenant host. */
export const requireTenant: RequestHandler = (req, _res, next) => {
  if (!req.tenant)
    throw new AppError('tenant_not_found', 'This endpoint is served on a tenant host ({tenant}.<base domain>)');
  next();
};
