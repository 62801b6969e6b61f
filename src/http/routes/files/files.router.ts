import { Router } from 'express';
import type { MediaService } from '../../../core/media.service.js';
import { guard, principalOf } from '../../middleware/auth.js';
import { requireTenant } from '../../middleware/tenant.js';
import { parse } from '../../validate.js';
import { sendDownload } from '../media/download.js';
import { ContainerParams, DownloadQuery, SharedParams } from './files.schema.js';

/** /api/files: files shared through a FileShare path. */
export function sharedFilesRouter(media: MediaService): Router {
  const r = Router();
  r.use(requireTenant);
  r.get('/shared/:filePath', guard('files.shared'), async (req, res) => {
    const { filePath } = parse(SharedParams, req.params, 'params');
    const { forceDownload } = parse(DownloadQuery, req.query, 'query');
    await sendDownload(req, res, await media.shared(principalOf(req), filePath), forceDownload);
  });
  return r;
}

/** /files/{tenantId}/{container}/{*path}: a file of a tenant container, the path spanning segments. */
export function containerFilesRouter(media: MediaService): Router {
  const r = Router();
  r.use(requireTenant);
  r.get('/:tenantId/:container/*path', guard('files.container'), async (req, res) => {
    const { tenantId, container, path } = parse(ContainerParams, req.params, 'params');
    const { forceDownload } = parse(DownloadQuery, req.query, 'query');
    await sendDownload(req, res, await media.containerFile(principalOf(req), tenantId, container, path), forceDownload);
  });
  return r;
}
