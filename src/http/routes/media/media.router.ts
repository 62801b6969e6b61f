import { Router } from 'express';
import type { MediaService } from '../../../core/media.service.js';
import { guard, principalOf } from '../../middleware/auth.js';
import { requireTenant } from '../../middleware/tenant.js';
import { parse } from '../../validate.js';
import { sendDownload } from './download.js';
import { multipartParts } from './multipart.js';
import { DownloadParams, DownloadQuery, presentUpload } from './media.schema.js';

/**
 * /api/media: the upload flow (multipart UploadContent -> CallResult), syncFiles for queued mobile
 * uploads (idempotent by clientRef), downloads by tenant and hash, and image thumbnails.
 */
export function mediaRouter(media: MediaService): Router {
  const r = Router();
  r.use(requireTenant);
  r.post('/upload', guard('media.upload'), async (req, res) => {
    const result = await media.upload(principalOf(req), multipartParts(req));
    res.status(result.created ? 201 : 200).json(presentUpload(req.tenant!.name, result));
  });
  r.post('/syncFiles', guard('media.syncFiles'), async (req, res) => {
    const result = await media.upload(principalOf(req), multipartParts(req), { requireClientRef: true });
    res.status(result.created ? 201 : 200).json(presentUpload(req.tenant!.name, result));
  });
  r.get('/download/:tenant/:hash', guard('media.download'), async (req, res) => {
    const { tenant, hash } = parse(DownloadParams, req.params, 'params');
    const { forceDownload } = parse(DownloadQuery, req.query, 'query');
    await sendDownload(req, res, await media.download(principalOf(req), tenant, hash), forceDownload);
  });
  r.get('/thumbnail/:tenant/:hash', guard('media.thumbnail'), async (req, res) => {
    const { tenant, hash } = parse(DownloadParams, req.params, 'params');
    await sendDownload(req, res, await media.thumbnail(principalOf(req), tenant, hash));
  });
  return r;
}

/** /media/download/{tenant}/{hash}: the alias existing clients call. */
export function mediaAliasRouter(media: MediaService): Router {
  const r = Router();
  r.use(requireTenant);
  r.get('/download/:tenant/:hash', guard('media.downloadAlias'), async (req, res) => {
    const { tenant, hash } = parse(DownloadParams, req.params, 'params');
    const { forceDownload } = parse(DownloadQuery, req.query, 'query');
    await sendDownload(req, res, await media.download(principalOf(req), tenant, hash), forceDownload);
  });
  return r;
}
