import { z } from 'zod';
import { SaveNoticeCommand } from '../../../core/directory/notice.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import { CurrentNotice, Notice, presentNotice } from '../../presenters/notice.presenter.js';

/** /api/notification: the tenant-wide system notice. */
export const notificationRoutes: RouteGroup = {
  base: '/api/notification',
  tag: 'Notifications',
  routes: [
    op({
      operationId: 'notification.save',
      requires: 'notices:manage',
      links: { seen: { operationId: 'contacts.notificationSeen', parameters: { noticeId: '$response.body#/id' } } },
      method: 'post',
      path: '/save',
      body: SaveNoticeCommand,
      response: Notice,
      status: 201,
      summary: 'Save a new system notice; it replaces the current one',
      handle: async (s, { p, body }) => presentNotice(await s.notices.save(p, body)),
    }),
    op({
      operationId: 'notification.clear',
      requires: 'notices:manage',
      method: 'post',
      path: '/clear',
      response: z.object({ cleared: z.boolean() }),
      summary: 'Clear the current notice (cleared: false when there was none)',
      handle: (s, { p }) => s.notices.clear(p),
    }),
    op({
      operationId: 'notification.current',
      requires: 'notices:read',
      method: 'get',
      path: '/current',
      response: CurrentNotice,
      summary: 'The current notice, or null',
      handle: async (s, { p }) => {
        const n = await s.notices.current(p);
        return { notice: n ? presentNotice(n) : null };
      },
    }),
  ],
};
