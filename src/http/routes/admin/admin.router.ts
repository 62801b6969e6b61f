import { timingSafeEqual, createHash } from 'node:crypto';
import { Router } from 'express';
import { AppError } from '../../../core/errors.js';
import type { Services } from '../../../composition.js';
import { parse } from '../../validate.js';
import { MigrateBody, MigrateParams, MigrateQuery } from './admin.schema.js';

/** Compares secrets in constant time (hashing first so lengths never leak). */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/**
 * Provisioning: POST /api/admin/migrate/{tenantName}?code= creates the tenant when missing and runs
 * its migrations. Authenticated by the provisioning code, not by a user token.
 */
export function adminMigrateRouter(services: Services, provisioningCode: string): Router {
  const r = Router();
  r.post('/migrate/:tenantName', async (req, res) => {
    const { code } = parse(MigrateQuery, req.query, 'query');
    if (!secretEquals(code, provisioningCode)) throw new AppError('forbidden', 'Invalid provisioning code');
    const { tenantName } = parse(MigrateParams, req.params, 'params');
    const body = parse(MigrateBody, req.body);
    const result = await services.tenants.ensure({ name: tenantName, displayName: body?.displayName });
    res.json({ tenant: tenantName, ...result });
  });
  return r;
}
