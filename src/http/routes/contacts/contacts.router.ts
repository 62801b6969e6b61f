import { z } from 'zod';
import { AVATAR_MAX_BYTES } from '../../../core/directory/contact.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import { PageOf, presentPage } from '../../presenters/common.presenter.js';
import {
  ContactInfo,
  ContactSummary,
  presentContactInfo,
  presentContactSummary,
} from '../../presenters/contact.presenter.js';
import { GroupInfo, presentGroup } from '../../presenters/group.presenter.js';
import { parse } from '../../validate.js';
import { readMultipart } from './multipart.js';
import {
  ContactSearchQuery,
  CreateGroupCommand,
  FavouriteResult,
  GroupIdParams,
  GroupMembersCommand,
  NoticeIdParams,
  NoticeSeenResult,
  RenameGroupCommand,
  SetFavouriteCommand,
  UpdateContactCommand,
} from './contacts.schema.js';

/** /api/contacts: the directory, favourites, groups and notice acknowledgement. */
export const contactRoutes: RouteGroup = {
  base: '/api/contacts',
  tag: 'Contacts',
  routes: [
    op({
      operationId: 'contacts.get',
      requires: 'contacts:read',
      method: 'get',
      path: '/get',
      query: ContactSearchQuery,
      response: PageOf(ContactSummary),
      summary: 'Search contacts (name, alphabet), or frequent contacts from call and meeting history; paged',
      description: '`take` is clamped to PAGE_MAX_TAKE (default 100); the page echoes the take used.',
      handle: async (s, { p, query }) =>
        presentPage(await s.contacts.search(p, query), (v) => presentContactSummary(p.tenant, v)),
    }),
    op({
      operationId: 'contacts.groupUsers',
      requires: 'contacts:read',
      errors: ['group_not_found'],
      method: 'get',
      path: '/group/users/:groupId',
      params: GroupIdParams,
      response: z.array(ContactSummary),
      summary: 'Contacts of a group the caller owns or belongs to',
      handle: async (s, { p, params }) => {
        const g = await s.groups.byId(p, params.groupId);
        return (await s.contacts.byIds(p, g.participantIds)).map((v) => presentContactSummary(p.tenant, v));
      },
    }),
    op({
      operationId: 'contacts.me',
      requires: 'profile:read',
      errors: ['user_not_found'],
      method: 'get',
      path: '/me',
      response: ContactInfo,
      summary: "The caller's own contact card (Me)",
      handle: async (s, { p }) => presentContactInfo(p.tenant, await s.contacts.me(p)),
    }),
    op({
      operationId: 'contacts.setFavourite',
      requires: 'contacts:read',
      errors: ['contact_not_found'],
      method: 'post',
      path: '/setFavourite',
      body: SetFavouriteCommand,
      response: FavouriteResult,
      summary: 'Mark (favourite: true) or unmark a contact as favourite; idempotent',
      handle: (s, { p, body }) => s.contacts.setFavourite(p, body),
    }),
    op({
      operationId: 'contacts.update',
      requires: 'profile:write',
      errors: ['unsupported_media_type', 'payload_too_large', 'file_content_mismatch', 'user_not_found'],
      method: 'post',
      path: '/update',
      response: ContactInfo,
      multipart: {
        fields: UpdateContactCommand,
        files: [{ name: 'avatar', description: `PNG, JPEG, GIF or WebP image, at most ${AVATAR_MAX_BYTES} bytes` }],
      },
      summary: "Update the caller's contact information (multipart form; optional avatar image)",
      handle: async (s, { p, req }) => {
        const form = await readMultipart(req, { fileFields: ['avatar'], maxFileBytes: AVATAR_MAX_BYTES });
        const fields = parse(UpdateContactCommand, form.fields);
        const avatar = form.files.get('avatar');
        return presentContactInfo(
          p.tenant,
          await s.contacts.update(p, fields, avatar && avatar.body.length ? { body: avatar.body } : undefined),
        );
      },
    }),
    op({
      operationId: 'contacts.groupCreate',
      requires: 'groups:manage',
      links: {
        users: { operationId: 'contacts.groupUsers', parameters: { groupId: '$response.body#/id' } },
        rename: {
          operationId: 'contacts.groupRename',
          requestBody: { groupId: '$response.body#/id', name: 'Renamed group' },
        },
      },
      errors: ['contact_not_found'],
      method: 'post',
      path: '/group/create',
      body: CreateGroupCommand,
      response: GroupInfo,
      status: 201,
      summary: 'Create a contact group owned by the caller',
      handle: async (s, { p, body }) => presentGroup(await s.groups.create(p, body)),
    }),
    op({
      operationId: 'contacts.groupRename',
      requires: 'groups:manage',
      errors: ['group_not_found'],
      method: 'post',
      path: '/group/rename',
      body: RenameGroupCommand,
      response: GroupInfo,
      summary: 'Rename a group the caller owns',
      handle: async (s, { p, body }) => presentGroup(await s.groups.rename(p, body)),
    }),
    op({
      operationId: 'contacts.groupAdd',
      requires: 'groups:manage',
      errors: ['group_not_found', 'contact_not_found'],
      method: 'post',
      path: '/group/add',
      body: GroupMembersCommand,
      response: GroupInfo,
      summary: 'Add participants to a group the caller owns',
      handle: async (s, { p, body }) => presentGroup(await s.groups.add(p, body)),
    }),
    op({
      operationId: 'contacts.groupRemove',
      requires: 'groups:manage',
      errors: ['group_not_found'],
      method: 'post',
      path: '/group/remove',
      body: GroupMembersCommand,
      response: GroupInfo,
      summary: 'Remove participants from a group the caller owns',
      handle: async (s, { p, body }) => presentGroup(await s.groups.remove(p, body)),
    }),
    op({
      operationId: 'contacts.notificationSeen',
      requires: 'notices:read',
      errors: ['notice_not_found'],
      method: 'post',
      path: '/notificationSeen/:noticeId',
      params: NoticeIdParams,
      response: NoticeSeenResult,
      summary: 'Acknowledge a system notice by id (idempotent)',
      handle: (s, { p, params }) => s.notices.seen(p, params.noticeId),
    }),
  ],
};
