import { Router } from 'express';
import { requireTenant } from '../../middleware/tenant.js';

/** /api/tenant: liveness of the tenant's API. */
export function tenantRouter(): Router {
  const r = Router();
  r.get('/ping', requireTenant, (req, res) => {
    res.json({ tenant: req.tenant!.name, displayName: req.tenant!.displayName, status: 'ok', time: new Date().toISOString() });
  });
  return r;
}
