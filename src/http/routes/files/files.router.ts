import { op, type RouteGroup } from '../route-spec.js';
import { sendDownload } from '../media/download.js';
import { ContainerParams, DownloadQuery, SharedParams } from './files.schema.js';

/** /api/files: files shared through a FileShare path. */
export const sharedFilesRoutes: RouteGroup = {
  base: '/api/files',
  tag: 'Files',
  routes: [
    op({
      operationId: 'files.shared',
      requires: 'media:read',
      note: 'the share path is the grant',
      method: 'get',
      path: '/shared/:filePath',
      params: SharedParams,
      query: DownloadQuery,
      binary: { ranged: true, description: 'The shared file' },
      summary: 'Download a file shared through a FileShare path (the path is the grant)',
      errors: ['file_not_found', 'range_not_satisfiable'],
      handle: async (s, { p, params, query, req, res }) =>
        sendDownload(req, res, await s.media.shared(p, params.filePath), query.forceDownload),
    }),
  ],
};

/** /files/{tenantId}/{container}/{*path}: a file of a tenant container, the path spanning segments. */
export const containerFilesRoutes: RouteGroup = {
  base: '/files',
  tag: 'Files',
  routes: [
    op({
      operationId: 'files.container',
      requires: 'media:read',
      note: 'media and thumbnails: the media access rule; recordings: tenant:admin; assets: any reader',
      method: 'get',
      path: '/:tenantId/:container/*path',
      params: ContainerParams,
      query: DownloadQuery,
      binary: { ranged: true, description: 'The file' },
      summary: 'Read a file from a tenant container; the final path may span several segments',
      errors: ['file_not_found', 'wrong_tenant', 'range_not_satisfiable'],
      handle: async (s, { p, params, query, req, res }) =>
        sendDownload(
          req,
          res,
          await s.media.containerFile(p, params.tenantId, params.container, params.path),
          query.forceDownload,
        ),
    }),
  ],
};
