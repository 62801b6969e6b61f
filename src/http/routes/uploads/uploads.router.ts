import { op, type RouteGroup } from '../route-spec.js';
import { multipartParts } from '../media/multipart.js';
import { ImportParams, ImportStatus, ImportSummary, presentImport, presentImportSummary } from './uploads.schema.js';
import { z } from 'zod';
import { clampTake, Paging } from '../../../kernel/paging.js';
import { PageOf, presentPage } from '../../presenters/common.presenter.js';

/**
 * /api/uploads: bulk import of pending users from a spreadsheet. The upload answers 202 with the
 * import id at once; the import runs as a job whose progress and row errors are read back by id.
 */
export const uploadsRoutes: RouteGroup = {
  base: '/api/uploads',
  tag: 'Bulk user upload',
  routes: [
    op({
      operationId: 'uploads.pendingUsers',
      requires: 'users:import',
      links: {
        status: { operationId: 'uploads.pendingUsersStatus', parameters: { importId: '$response.body#/importId' } },
      },
      method: 'post',
      path: '/pendingUsers',
      response: ImportStatus,
      status: 202,
      multipart: {
        fields: z.object({}),
        files: [{ name: 'file', description: 'The spreadsheet (.xlsx) of pending users', required: true }],
        streaming: true,
      },
      headers: {
        Location: {
          description: 'GET this URL for the progress and the per-row error report',
          schema: { type: 'string' },
        },
      },
      summary: 'Upload a spreadsheet (Excel) of pending users for bulk import; answers 202 with the import id',
      errors: ['unsupported_media_type', 'payload_too_large', 'spreadsheet_rejected'],
      handle: async (s, { p, req, res }) => {
        const record = await s.imports.start(p, multipartParts(req));
        res.location(`${req.baseUrl}/pendingUsers/${record.id}`);
        return presentImport(record);
      },
    }),
    op({
      operationId: 'uploads.imports',
      requires: 'users:import',
      method: 'get',
      path: '/pendingUsers',
      query: Paging,
      response: PageOf(ImportSummary),
      summary: "The tenant's pending-users imports, newest first, with their progress counters; paged",
      description:
        "Each import's row-error report is read with GET /api/uploads/pendingUsers/{importId}. `take` is clamped to PAGE_MAX_TAKE.",
      handle: async (s, { p, query, infra }) => {
        const page = clampTake(query, infra.config.limits.pageMaxTake);
        return presentPage(await s.activation.listImports(p, page.skip, page.take), presentImportSummary);
      },
    }),
    op({
      operationId: 'uploads.pendingUsersStatus',
      requires: 'users:import',
      note: 'progress and per-row error report of an import',
      method: 'get',
      path: '/pendingUsers/:importId',
      params: ImportParams,
      response: ImportStatus,
      summary: 'Progress and per-row error report of a pending-users import',
      errors: ['import_not_found'],
      handle: async (s, { p, params }) => presentImport(await s.imports.status(p, params.importId)),
    }),
  ],
};
