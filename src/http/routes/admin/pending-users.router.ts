import { z } from 'zod';
import { clampTake, Paging } from '../../../kernel/paging.js';
import { MAX_ACTIVATIONS_PER_REQUEST, type PendingUserView } from '../../../core/media/activation.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import { IsoDate, PageOf, iso, presentPage } from '../../presenters/common.presenter.js';
import { ProvisionedAccount } from './admin.schema.js';

const Username = z.string().min(1).max(200);
const ImportId = z.string().uuid('must be an import id');

export const PendingUsersQuery = Paging.extend({
  status: z.enum(['pending', 'activated']).optional().describe('only users in this state'),
  importId: ImportId.optional().describe("only this import's users, in sheet order"),
  q: z.string().min(1).max(200).optional().describe('a username prefix'),
});

export const PendingUser = z.object({
  username: z.string(),
  email: z.string().optional(),
  displayName: z.string(),
  role: z.string(),
  importId: z.string(),
  rowNumber: z.number().int(),
  status: z.enum(['pending', 'activated']),
  activatedAt: IsoDate.nullable(),
  activatedBy: z.string().optional().describe('the admin who activated the user'),
  userId: z.string().optional().describe('the account the activation made or found'),
  createdAt: IsoDate.nullable(),
});

export const ActivateCommand = z
  .object({
    usernames: z
      .array(Username)
      .min(1)
      .max(MAX_ACTIVATIONS_PER_REQUEST)
      .optional()
      .describe('the pending users to activate (one or many)'),
    importId: ImportId.optional().describe('without usernames: activate the next `limit` pending users of this import'),
    limit: z.number().int().min(1).max(MAX_ACTIVATIONS_PER_REQUEST).optional().describe('default 100'),
    reissue: z
      .boolean()
      .optional()
      .describe(
        'give already activated users whose account cannot sign in yet a new link (the older one stops working)',
      ),
  })
  .refine((c) => c.usernames !== undefined || c.importId !== undefined, {
    message: 'name the usernames, or an importId',
    path: ['usernames'],
  });

export const ActivationResult = z.object({
  results: z.array(
    z.object({
      username: z.string(),
      outcome: z
        .enum(['activated', 'reissued', 'already_activated', 'not_found', 'refused'])
        .describe('reissued: a new link for an activated user (with `reissue`); refused: see `reason`'),
      account: ProvisionedAccount.optional(),
      reason: z.string().optional(),
    }),
  ),
  remaining: z.number().int().optional().describe("with importId: the import's users still pending"),
});

function presentPendingUser(u: PendingUserView) {
  return {
    username: u.username,
    ...(u.email ? { email: u.email } : {}),
    displayName: u.displayName,
    role: u.role,
    importId: u.importId,
    rowNumber: u.rowNumber,
    status: u.status,
    activatedAt: iso(u.activatedAt),
    ...(u.activatedBy ? { activatedBy: u.activatedBy } : {}),
    ...(u.userId ? { userId: u.userId } : {}),
    createdAt: iso(u.createdAt),
  };
}

/**
 * /api/admin/pendingUsers: imported users waiting to be activated, and their activation (singly, by
 * list, or an import's next batch), which makes each an account with a one-time set-password link or a
 * first-sign-in binding (docs/onboarding.md).
 */
export const adminPendingUserRoutes: RouteGroup = {
  base: '/api/admin',
  tag: 'Bulk user upload',
  routes: [
    op({
      operationId: 'admin.pendingUsers',
      requires: 'users:import',
      method: 'get',
      path: '/pendingUsers',
      query: PendingUsersQuery,
      response: PageOf(PendingUser),
      summary: 'Imported users, pending or activated, filtered by state, import and username prefix; paged',
      description:
        '`take` is clamped to PAGE_MAX_TAKE; with `importId` the order is the sheet order, else by username.',
      handle: async (s, { p, query, infra }) => {
        const page = clampTake(query, infra.config.limits.pageMaxTake);
        const filter = {
          ...(query.status ? { status: query.status } : {}),
          ...(query.importId ? { importId: query.importId } : {}),
          ...(query.q ? { q: query.q } : {}),
        };
        return presentPage(await s.activation.listPending(p, filter, page.skip, page.take), presentPendingUser);
      },
    }),
    op({
      operationId: 'admin.activatePendingUsers',
      requires: 'users:manage',
      note: 'makes accounts with the roles the sheet named, so it needs the right to assign roles',
      method: 'post',
      path: '/pendingUsers/activate',
      body: ActivateCommand,
      response: ActivationResult,
      summary:
        'Activate pending users: each becomes an account with a one-time set-password link (embedded realm) or a first-sign-in binding',
      description: `At most ${MAX_ACTIVATIONS_PER_REQUEST} users per request; with \`importId\` alone, repeat until \`remaining\` is 0. Links are returned once, to hand to each person; only their hash is stored.`,
      errors: ['import_not_found'],
      handle: async (s, { p, body }) => {
        const r = await s.activation.activate(p, {
          ...(body.usernames ? { usernames: body.usernames } : {}),
          ...(body.importId ? { importId: body.importId } : {}),
          ...(body.limit ? { limit: body.limit } : {}),
          ...(body.reissue ? { reissue: true } : {}),
        });
        return r;
      },
    }),
  ],
};
