import { op, type RouteGroup } from '../route-spec.js';
import { Paging } from '../../../kernel/paging.js';
import { PageOf, presentPage } from '../../presenters/common.presenter.js';
import { FileItem, presentFile } from '../../presenters/records.presenter.js';
import { SessionIdParams } from './sessions.schema.js';

/** /api/sessions: what was recorded for a call session (the `sessionId` of uploads). */
export const sessionRoutes: RouteGroup = {
  base: '/api/sessions',
  tag: 'Sessions',
  routes: [
    op({
      operationId: 'sessions.files',
      requires: 'media:read',
      note: "the media access rule: the call's caller or participants and tenant:admin see all, anyone else their own uploads",
      errors: ['call_not_found'],
      method: 'get',
      path: '/:sessionId/files',
      params: SessionIdParams,
      query: Paging,
      response: PageOf(FileItem),
      summary: "A call session's files (uploaded with its sessionId), newest first; paged",
      description:
        "The call's caller and participants and tenant administrators see every file; anyone else only the files they uploaded into it.",
      handle: async (s, { p, params, query }) =>
        presentPage(await s.records.sessionFiles(p, params.sessionId, query), (f) => presentFile(p.tenant, f)),
    }),
  ],
};
