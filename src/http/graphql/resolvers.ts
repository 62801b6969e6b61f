import type { ContactView } from '../../core/contact.service.js';
import { MyContactsArgs } from '../../core/contact.schema.js';
import { fromZod } from '../../core/errors.js';
import type { GroupRecord } from '../../data/models/group.model.js';
import { presentContactInfo, presentContactSummary } from '../presenters/contact.presenter.js';
import { presentGroup } from '../presenters/group.presenter.js';
import { presentMyNotice } from '../presenters/notice.presenter.js';
import { presentPage } from '../presenters/common.presenter.js';
import { need, type GraphQLContext } from './context.js';
import { AuditQuery, auditFilterOf } from '../../core/audit-query.js';
import { withoutNulls } from './args.js';
import { meetingControlMutations } from './meeting-controls.resolvers.js';
import { recordingConsentMutations } from './recording-consent.resolvers.js';
import { Paging } from '../../core/paging.js';
import { presentEventFile, presentFile, presentLedgerEntry } from '../presenters/records.presenter.js';

type Ctx = GraphQLContext;
type Args = Record<string, unknown>;

/** Resolvers call the same services and presenters as REST; each checks the permission table first. */
export const resolvers = {
  Mutation: { ...meetingControlMutations, ...recordingConsentMutations },
  Query: {
    me: async (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.me');
      return ctx.once('me', () => ctx.services.auth.account.me(p));
    },
    tenantConfig: async (_: unknown, __: Args, ctx: Ctx) => {
      need(ctx, 'graphql.tenantConfig');
      return ctx.once('tenantConfig', () => ctx.services.admin.tenantConfig(ctx.tenant));
    },
    basicTenantInfo: (_: unknown, __: Args, ctx: Ctx) => {
      need(ctx, 'graphql.basicTenantInfo');
      return ctx.services.admin.basicTenantInfo(ctx.tenant);
    },
    generatePrivateServerConfig: (_: unknown, __: Args, ctx: Ctx) => {
      need(ctx, 'graphql.generatePrivateServerConfig');
      return ctx.services.admin.privateServerConfig(ctx.tenant);
    },
    generatePrivateServerConfigQrCode: (_: unknown, __: Args, ctx: Ctx) => {
      need(ctx, 'graphql.generatePrivateServerConfigQrCode');
      return ctx.once('qr', () => ctx.services.admin.privateServerConfigQrCode(ctx.tenant));
    },
    tenantSecurityRules: (_: unknown, __: Args, ctx: Ctx) => {
      need(ctx, 'graphql.tenantSecurityRules');
      return ctx.once('securityRules', () => ctx.services.auth.account.securityRules(ctx.tenant.name));
    },
    myContacts: async (_: unknown, args: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.myContacts');
      const parsed = MyContactsArgs.safeParse(withoutNulls(args));
      if (!parsed.success) throw fromZod(parsed.error);
      return presentPage(await ctx.services.contacts.myContacts(p, parsed.data), (v) =>
        presentContactSummary(p.tenant, v),
      );
    },
    contactAlphabets: async (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.contactAlphabets');
      const rows = await ctx.once('alphabets', () => ctx.services.contacts.alphabets(p));
      return rows.map((r) => ({ letter: r.initial, count: r.count }));
    },
    waitingRoom: async (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.meetingRooms.waiting(need(ctx, 'graphql.waitingRoom'), String(args.eventId)),
    eventLedger: async (_: unknown, args: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.eventLedger');
      return presentPage(
        await ctx.services.records.ledger(p, String(args.eventId), pagingOf(args)),
        presentLedgerEntry,
      );
    },
    eventFiles: async (_: unknown, args: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.eventFiles');
      const page = await ctx.services.records.eventFiles(p, String(args.eventId), pagingOf(args));
      // The REST shape (the file's fields beside source and attached), plus the deprecated nested `file`.
      return presentPage(page, (v) => {
        const item = presentEventFile(p.tenant, v);
        const { source: _source, attached: _attached, ...file } = item;
        return { ...item, file };
      });
    },
    sessionFiles: async (_: unknown, args: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.sessionFiles');
      const page = await ctx.services.records.sessionFiles(p, String(args.sessionId), pagingOf(args));
      return presentPage(page, (f) => presentFile(p.tenant, f));
    },
    groupById: async (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.groups.byId(need(ctx, 'graphql.groupById'), String(args.groupId)),
    hasPin: (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.hasPin');
      return ctx.once('hasPin', () => ctx.services.auth.account.hasPin(p));
    },
    auditTrail: async (_: unknown, args: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.auditTrail');
      const parsed = AuditQuery.safeParse(withoutNulls((args.filter ?? {}) as Args));
      if (!parsed.success) throw fromZod(parsed.error);
      const take = Math.min(parsed.data.take, 500);
      const items = await ctx.services.auth.audit.list(p.tenant, auditFilterOf(parsed.data), take);
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
    auditVerify: async (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.auditVerify');
      const r = await ctx.once('auditVerify', () => ctx.services.auth.audit.verify(p.tenant));
      return {
        ...r,
        headSeq: r.head.seq,
        headHash: r.head.hash,
        firstBroken: r.firstBroken ?? null,
        message: r.message ?? null,
      };
    },
    myNotice: async (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.myNotice');
      const mine = await ctx.once('myNotice', () => ctx.services.notices.mine(p));
      return mine ? presentMyNotice(mine) : null;
    },
  },
  Me: {
    id: (me: { user: { id: string } }) => me.user.id,
    username: (me: { user: { username: string } }) => me.user.username,
    displayName: (me: { user: { displayName: string } }) => me.user.displayName,
    email: (me: { user: { email?: string } }) => me.user.email ?? null,
    role: (me: { user: { role: string } }) => me.user.role,
    kind: (me: { user: { kind: string } }) => me.user.kind,
    contact: async (_: unknown, __: Args, ctx: Ctx) => {
      const p = need(ctx, 'graphql.me');
      return presentContactInfo(p.tenant, await ctx.once('me.contact', () => ctx.services.contacts.me(p)));
    },
  },
  Group: {
    id: (g: GroupRecord) => String(g._id),
    ownerId: (g: GroupRecord) => String(g.ownerId),
    participantCount: (g: GroupRecord) => g.participantIds.length,
    owner: async (g: GroupRecord, _: Args, ctx: Ctx) => summary(ctx, await ctx.loaders.contact.load(String(g.ownerId))),
    participants: async (g: GroupRecord, _: Args, ctx: Ctx) => {
      const views = await ctx.loaders.contact.loadMany(g.participantIds.map(String));
      return views.flatMap((v) => (v && !(v instanceof Error) ? [summary(ctx, v)] : []));
    },
    name: (g: GroupRecord) => presentGroup(g).name,
  },
  PrivateServerConfig: {
    json: (c: object) => JSON.stringify(c),
  },
};

function summary(ctx: Ctx, v: ContactView | null) {
  return v ? presentContactSummary(ctx.tenant.name, v) : null;
}

/** The `paging` argument, validated like REST's skip/take (decision 003). */
function pagingOf(args: Args): Paging {
  const parsed = Paging.safeParse(withoutNulls((args.paging ?? {}) as Args));
  if (!parsed.success) throw fromZod(parsed.error, 'paging');
  return parsed.data;
}
