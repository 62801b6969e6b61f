import type { ContactView } from '../../core/directory/contact.service.js';
import { MyContactsArgs } from '../../core/directory/contact.schema.js';
import { presentContactInfo, presentContactSummary } from '../presenters/contact.presenter.js';
import { presentGroup } from '../presenters/group.presenter.js';
import { presentMyNotice } from '../presenters/notice.presenter.js';
import { presentPage } from '../presenters/common.presenter.js';
import { need, type GraphQLContext } from './context.js';
import { AuditQuery, auditFilterOf } from '../../core/audit/audit-query.js';
import { parseArgs } from './args.js';
import { meetingControlMutations } from './meeting-controls.resolvers.js';
import { recordingConsentMutations } from './recording-consent.resolvers.js';
import { Paging } from '../../kernel/paging.js';
import { presentEventFile, presentFile, presentLedgerEntry } from '../presenters/records.presenter.js';
import type {
  AuditFilter,
  Group as GroupType,
  GroupResolvers,
  InputMaybe,
  Me as MeType,
  MeResolvers,
  MutationResolvers,
  PagingInput,
  PrivateServerConfig as PrivateServerConfigType,
  PrivateServerConfigResolvers,
  QueryResolvers,
  Resolvers,
} from './generated/types.js';
import type { Assert, Covered, GroupModel, MeModel, PrivateServerConfigModel } from './models.js';

type Ctx = GraphQLContext;

/** Parents mapped to models (models.ts): the fields the models do not carry as they are. */
const Me = {
  id: (me) => me.user.id,
  username: (me) => me.user.username,
  displayName: (me) => me.user.displayName,
  email: (me) => me.user.email ?? null,
  role: (me) => me.user.role,
  kind: (me) => me.user.kind,
  contact: async (_parent, _args, ctx) => {
    const p = need(ctx, 'me');
    return presentContactInfo(p.tenant, await ctx.once('me.contact', () => ctx.services.contacts.me(p)));
  },
} satisfies MeResolvers;

const Group = {
  id: (g) => String(g._id),
  ownerId: (g) => String(g.ownerId),
  participantCount: (g) => g.participantIds.length,
  owner: async (g, _args, ctx) => summary(ctx, await ctx.loaders.contact.load(String(g.ownerId))),
  participants: async (g, _args, ctx) => {
    const views = await ctx.loaders.contact.loadMany(g.participantIds.map(String));
    return views.flatMap((v) => (v && !(v instanceof Error) ? [presentContactSummary(ctx.tenant.name, v)] : []));
  },
  name: (g) => presentGroup(g).name,
} satisfies GroupResolvers;

const PrivateServerConfig = {
  json: (c) => JSON.stringify(c),
} satisfies PrivateServerConfigResolvers;

/** Fails the typecheck when a mapped model lacks a field left to the default resolver. */
export type ParentModelsCovered = Assert<
  | Covered<MeModel, MeType, typeof Me>
  | Covered<GroupModel, GroupType, typeof Group>
  | Covered<PrivateServerConfigModel, PrivateServerConfigType, typeof PrivateServerConfig>
>;

/**
 * Resolvers call the same services and presenters as REST; each first checks what its operation requires
 * (operations.ts, `need`).
 * Typed from the schema (generated/types.ts, decision 1102): arguments, results and parents.
 */
export const resolvers: Resolvers = {
  // `satisfies Required<...>`: every field of the root types has its resolver (the generated maps make each optional).
  Mutation: { ...meetingControlMutations, ...recordingConsentMutations } satisfies Required<MutationResolvers>,
  Query: {
    me: async (_parent, _args, ctx) => {
      const p = need(ctx, 'me');
      return ctx.once('me', () => ctx.services.auth.account.me(p));
    },
    tenantConfig: async (_parent, _args, ctx) => {
      need(ctx, 'tenantConfig');
      return ctx.once('tenantConfig', () => ctx.services.admin.tenantConfig(ctx.tenant));
    },
    basicTenantInfo: (_parent, _args, ctx) => {
      need(ctx, 'basicTenantInfo');
      return ctx.services.admin.basicTenantInfo(ctx.tenant);
    },
    generatePrivateServerConfig: (_parent, _args, ctx) => {
      need(ctx, 'generatePrivateServerConfig');
      return ctx.services.admin.privateServerConfig(ctx.tenant);
    },
    generatePrivateServerConfigQrCode: (_parent, _args, ctx) => {
      need(ctx, 'generatePrivateServerConfigQrCode');
      return ctx.once('qr', () => ctx.services.admin.privateServerConfigQrCode(ctx.tenant));
    },
    tenantSecurityRules: (_parent, _args, ctx) => {
      need(ctx, 'tenantSecurityRules');
      return ctx.once('securityRules', () => ctx.services.auth.account.securityRules(ctx.tenant.name));
    },
    myContacts: async (_parent, args, ctx) => {
      const p = need(ctx, 'myContacts');
      return presentPage(await ctx.services.contacts.myContacts(p, parseArgs(MyContactsArgs, args)), (v) =>
        presentContactSummary(p.tenant, v),
      );
    },
    contactAlphabets: async (_parent, _args, ctx) => {
      const p = need(ctx, 'contactAlphabets');
      const rows = await ctx.once('alphabets', () => ctx.services.contacts.alphabets(p));
      return rows.map((r) => ({ letter: r.initial, count: r.count }));
    },
    waitingRoom: async (_parent, args, ctx) =>
      ctx.services.meetingRooms.waiting(need(ctx, 'waitingRoom'), String(args.eventId)),
    eventLedger: async (_parent, args, ctx) => {
      const p = need(ctx, 'eventLedger');
      return presentPage(
        await ctx.services.records.ledger(p, String(args.eventId), pagingOf(args)),
        presentLedgerEntry,
      );
    },
    eventFiles: async (_parent, args, ctx) => {
      const p = need(ctx, 'eventFiles');
      const page = await ctx.services.records.eventFiles(p, String(args.eventId), pagingOf(args));
      // The REST shape (the file's fields beside source and attached), plus the deprecated nested `file`.
      return presentPage(page, (v) => {
        const item = presentEventFile(p.tenant, v);
        const { source: _source, attached: _attached, ...file } = item;
        return { ...item, file };
      });
    },
    sessionFiles: async (_parent, args, ctx) => {
      const p = need(ctx, 'sessionFiles');
      const page = await ctx.services.records.sessionFiles(p, String(args.sessionId), pagingOf(args));
      return presentPage(page, (f) => presentFile(p.tenant, f));
    },
    groupById: async (_parent, args, ctx) => ctx.services.groups.byId(need(ctx, 'groupById'), String(args.groupId)),
    hasPin: (_parent, _args, ctx) => {
      const p = need(ctx, 'hasPin');
      return ctx.once('hasPin', () => ctx.services.auth.account.hasPin(p));
    },
    auditTrail: async (_parent, args, ctx) => {
      const p = need(ctx, 'auditTrail');
      const filter: AuditFilter = args.filter ?? {};
      const query = parseArgs(AuditQuery, filter);
      const take = Math.min(query.take, 500);
      const items = await ctx.services.auth.audit.list(p.tenant, auditFilterOf(query), take);
      const last = items[items.length - 1];
      return {
        items: items.map((e) => ({
          ...e,
          createdAt: e.createdAt.toISOString(),
          details: e.details ? JSON.stringify(e.details) : null,
        })),
        next: items.length === take && last ? last.seq : null,
      };
    },
    auditVerify: async (_parent, _args, ctx) => {
      const p = need(ctx, 'auditVerify');
      const r = await ctx.once('auditVerify', () => ctx.services.auth.audit.verify(p.tenant));
      return {
        ...r,
        headSeq: r.head.seq,
        headHash: r.head.hash,
        firstBroken: r.firstBroken ?? null,
        message: r.message ?? null,
      };
    },
    myNotice: async (_parent, _args, ctx) => {
      const p = need(ctx, 'myNotice');
      const mine = await ctx.once('myNotice', () => ctx.services.notices.mine(p));
      return mine ? presentMyNotice(mine) : null;
    },
  } satisfies Required<QueryResolvers>,
  Me,
  Group,
  PrivateServerConfig,
};

function summary(ctx: Ctx, v: ContactView | null) {
  return v ? presentContactSummary(ctx.tenant.name, v) : null;
}

/** The `paging` argument, validated like REST's skip/take (decision 003). */
function pagingOf(args: { paging?: InputMaybe<PagingInput> }): Paging {
  const paging: PagingInput = args.paging ?? {};
  return parseArgs(Paging, paging, 'paging');
}
