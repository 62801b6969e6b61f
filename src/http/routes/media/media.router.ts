import type { Request, Response } from 'express';
import type { Services } from '../../../app/index.js';
import type { Principal } from '../../../kernel/principal.js';
import type { ErrorCode } from '../../../kernel/errors.js';
import { op, type ExtraResponse, type RouteGroup } from '../route-spec.js';
import { sendDownload } from './download.js';
import { multipartParts } from './multipart.js';
import { DownloadParams, DownloadQuery, UploadFields, UploadResponse, presentUpload } from './media.schema.js';

const UPLOAD_ERRORS: ErrorCode[] = [
  'unsupported_media_type',
  'payload_too_large',
  'file_type_not_allowed',
  'file_content_mismatch',
  'event_not_found',
  'call_not_found',
  'wrong_tenant',
];
const DOWNLOAD_ERRORS: ErrorCode[] = ['file_not_found', 'wrong_tenant', 'range_not_satisfiable'];
const FILE_PART = {
  name: 'file',
  description: 'The file (exactly one part named "file"); size and extension per the tenant upload configuration',
  required: true,
};
const duplicate: Partial<Record<number, ExtraResponse>> = {
  200: {
    description: 'The clientRef already named a stored upload (a retry): the stored file, `duplicate: true`',
    schema: UploadResponse,
  },
};

async function upload(s: Services, p: Principal, req: Request, res: Response, requireClientRef: boolean) {
  const result = await s.media.upload(
    p,
    multipartParts(req),
    requireClientRef ? { requireClientRef: true } : undefined,
  );
  res.status(result.created ? 201 : 200);
  return presentUpload(req.tenant!.name, result);
}

const download = (operationId: 'media.download' | 'media.downloadAlias', summary: string) =>
  op({
    operationId,
    requires: 'media:read',
    note: 'and the media access rule: owner, member of the event or call of the file, or tenant:admin',
    method: 'get',
    path: '/download/:tenant/:hash',
    params: DownloadParams,
    query: DownloadQuery,
    summary,
    binary: {
      ranged: true,
      description: 'The file; inline for images, PDF, audio and video unless forceDownload, an attachment otherwise',
    },
    errors: DOWNLOAD_ERRORS,
    handle: async (s, { p, params, query, req, res }) =>
      sendDownload(req, res, await s.media.download(p, params.tenant, params.hash), query.forceDownload),
  });

/**
 * /api/media: the upload flow (multipart UploadContent -> CallResult), syncFiles for queued mobile
 * uploads (idempotent by clientRef), downloads by tenant and hash, and image thumbnails.
 */
export const mediaRoutes: RouteGroup = {
  base: '/api/media',
  tag: 'Media',
  routes: [
    op({
      operationId: 'media.upload',
      requires: 'media:upload',
      method: 'post',
      path: '/upload',
      response: UploadResponse,
      status: 201,
      alsoAnswers: duplicate,
      multipart: { fields: UploadFields, files: [FILE_PART], streaming: true },
      summary:
        'Upload a file for an event or session (multipart UploadContent); returns CallResult with the stored MediaFile',
      description:
        'Size, extension and known file headers are checked against the tenant upload configuration while streaming. With a `clientRef` a retry answers 200 with the stored file.',
      errors: UPLOAD_ERRORS,
      handle: (s, { p, req, res }) => upload(s, p, req, res, false),
    }),
    op({
      operationId: 'media.syncFiles',
      requires: 'media:upload',
      note: 'queued mobile uploads',
      method: 'post',
      path: '/syncFiles',
      response: UploadResponse,
      status: 201,
      alsoAnswers: duplicate,
      multipart: { fields: UploadFields.required({ clientRef: true }), files: [FILE_PART], streaming: true },
      summary: 'Queued mobile uploads: as upload, idempotent by the required clientRef',
      errors: UPLOAD_ERRORS,
      handle: (s, { p, req, res }) => upload(s, p, req, res, true),
    }),
    download('media.download', 'Download a file by tenant and hash (ETag, byte ranges)'),
    op({
      operationId: 'media.thumbnail',
      requires: 'media:read',
      note: 'image thumbnail once the thumbnail job produced it, and the media access rule: owner, member of the event or call of the file, or tenant:admin',
      method: 'get',
      path: '/thumbnail/:tenant/:hash',
      params: DownloadParams,
      binary: { ranged: true, description: 'The image thumbnail' },
      summary: 'Thumbnail of an uploaded image, once the thumbnail job made it',
      errors: [...DOWNLOAD_ERRORS, 'thumbnail_not_ready'],
      handle: async (s, { p, params, req, res }) =>
        sendDownload(req, res, await s.media.thumbnail(p, params.tenant, params.hash)),
    }),
  ],
};

/** /media/download/{tenant}/{hash}: the alias existing clients call. */
export const mediaAliasRoutes: RouteGroup = {
  base: '/media',
  tag: 'Media',
  routes: [download('media.downloadAlias', 'Alias of GET /api/media/download/{tenant}/{hash}')],
};
