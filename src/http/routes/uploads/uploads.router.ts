import { Router } from 'express';
import type { ImportService } from '../../../core/import.service.js';
import { guard, principalOf } from '../../middleware/auth.js';
import { requireTenant } from '../../middleware/tenant.js';
import { parse } from '../../validate.js';
import { multipartParts } from '../media/multipart.js';
import { ImportParams, presentImport } from './uploads.schema.js';

/**
 * /api/uploads: bulk import of pending users from a spreadsheet. The upload answers 202 with the
 * import id at once; the import runs as a job whose progress and row errors are read back by id.
 */
export function uploadsRouter(imports: ImportService): Router {
  const r = Router();
  r.use(requireTenant);
  r.post('/pendingUsers', guard('uploads.pendingUsers'), async (req, res) => {
    const record = await imports.start(principalOf(req), multipartParts(req));
    res.status(202).location(`${req.baseUrl}/pendingUsers/${record.id}`).json(presentImport(record));
  });
  r.get('/pendingUsers/:importId', guard('uploads.pendingUsersStatus'), async (req, res) => {
    const { importId } = parse(ImportParams, req.params, 'params');
    res.json(presentImport(await imports.status(principalOf(req), importId)));
  });
  return r;
}
