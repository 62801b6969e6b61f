import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';
import { op, type RouteGroup } from '../route-spec.js';
import {
  IsOnline,
  LastSeen,
  UserConnectivity,
  presentIsOnline,
  presentLastSeen,
  presentUserConnectivity,
} from '../../presenters/admin.presenter.js';

const ContactParams = z.object({ contactId: Id });
const UserParams = z.object({ tenant: z.string().min(1).max(63), username: z.string().min(1).max(200) });

/** /api/admin presence helpers (the migrate endpoint lives in admin.router.ts). */
export const adminPresenceRoutes: RouteGroup = {
  base: '/api/admin',
  tag: 'Admin helpers',
  routes: [
    op({
      operationId: 'admin.lastSeenContact',
      requires: 'presence:read',
      errors: ['contact_not_found'],
      method: 'get',
      path: '/lastSeen/:contactId',
      params: ContactParams,
      response: LastSeen,
      summary: 'Last-seen time and online state of a contact',
      handle: async (s, { p, params }) => presentLastSeen(await s.admin.byContact(p, params.contactId)),
    }),
    op({
      operationId: 'admin.lastSeenUser',
      requires: 'presence:read',
      errors: ['user_not_found'],
      method: 'get',
      path: '/lastSeen/:tenant/:username',
      params: UserParams,
      response: LastSeen,
      summary: "Last-seen by tenant and username (the tenant must be the caller's own)",
      handle: async (s, { p, params }) =>
        presentLastSeen(await s.admin.byUsername(p, params.tenant, params.username, 'lastSeen')),
    }),
    op({
      operationId: 'admin.isOnline',
      requires: 'presence:read',
      errors: ['user_not_found'],
      method: 'get',
      path: '/isOnline/:tenant/:username',
      params: UserParams,
      response: IsOnline,
      summary: 'Online state by tenant and username',
      handle: async (s, { p, params }) =>
        presentIsOnline(await s.admin.byUsername(p, params.tenant, params.username, 'isOnline')),
    }),
    op({
      operationId: 'admin.user',
      requires: 'presence:read',
      errors: ['user_not_found'],
      method: 'get',
      path: '/user/:tenant/:username',
      params: UserParams,
      response: UserConnectivity,
      summary: 'Connectivity and account info by tenant and username',
      handle: async (s, { p, params }) =>
        presentUserConnectivity(await s.admin.byUsername(p, params.tenant, params.username, 'user')),
    }),
  ],
};
