import { Readable } from 'node:stream';
import type { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { UserRecord, UserRepository, UserSearch } from '../../data/repositories/user.repository.js';
import { matchesSearch } from '../../data/models/name-tokens.js';
import type { FavouriteRepository } from '../../data/repositories/favourite.repository.js';
import type { CallRecordRepository } from '../../data/repositories/call-record.repository.js';
import type { EventRepository } from '../../data/repositories/event.repository.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';
import { clampTake, type Page, type Paging } from '../../kernel/paging.js';
import { TtlCache } from '../../kernel/ttl-cache.js';
import type { UserDirectorySearch } from '../../data/search/user-search.js';
import type {
  ContactSearchQuery,
  MyContactsArgs,
  SetFavouriteCommand,
  UpdateContactCommand,
} from './contact.schema.js';

/** A contact as every transport shows it: the user, merged with presence and the caller's favourite mark. */
export interface ContactView {
  user: UserRecord;
  online: boolean;
  favourite: boolean;
}

export interface ContactDeps {
  users: (tenant: string) => UserRepository;
  favourites: (tenant: string) => FavouriteRepository;
  calls: (tenant: string) => Pick<CallRecordRepository, 'recentCounterparts'>;
  events: (tenant: string) => Pick<EventRepository, 'recentCounterparts'>;
  onlineMany: (tenant: string, userIds: readonly string[]) => Promise<Set<string>>;
  /** The directory's search port: the in-memory directory where configured and loaded, else the database (decision 212). */
  search: Pick<UserDirectorySearch, 'search' | 'count' | 'initials'>;
  store: Pick<ObjectStore, 'putContentAddressed'>;
  pageMaxTake: number;
  /** Whom the caller may see (./directory-scope.ts): undefined for the whole tenant. */
  visibleTo(p: Principal): Promise<Types.ObjectId[] | undefined>;
}

/** How much history `frequent` and the call list look at. */
const HISTORY_CALLS = 200;
const HISTORY_EVENTS = 100;
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
/** How long a page's `total` may be reused (docs/decisions/210-contact-search-totals.md). */
export const TOTAL_REUSE_MS = 5000;
/** An alphabetical page's `total` is counted up to this many contacts (decision 210): a lower bound beyond. */
export const TOTAL_COUNT_CAP = 10_000;

/** Contacts directory: search, frequent contacts, favourites, own profile. */
export class ContactService {
  /** Recent counts of alphabetical searches, per tenant and filter (every caller included). */
  private readonly totals = new TtlCache<string, number>({ ttlMs: TOTAL_REUSE_MS, maxEntries: 10_000 });
  /** Callers' own records, to take them out of a shared count; as stale as the counts at most. */
  private readonly callers = new TtlCache<string, UserRecord | null>({ ttlMs: TOTAL_REUSE_MS, maxEntries: 10_000 });

  constructor(private readonly deps: ContactDeps) {}

  async search(p: Principal, q: ContactSearchQuery): Promise<Page<ContactView>> {
    const paging = clampTake(q, this.deps.pageMaxTake);
    if (q.frequent) return this.ranked(p, paging, { name: q.name, initial: q.alphabet });
    return this.alphabetical(p, paging, { name: q.name, initial: q.alphabet });
  }

  /** GraphQL myContacts: the same directory with the sort orders the apps ask for. */
  async myContacts(p: Principal, a: MyContactsArgs): Promise<Page<ContactView>> {
    const paging = clampTake(a.paging, this.deps.pageMaxTake);
    if (a.isCallList) return this.ranked(p, paging, { initial: a.alphabet });
    if (a.sortType === 'FAVOURITES_FIRST') return this.favouritesFirst(p, paging, a.alphabet);
    return this.alphabetical(p, paging, { initial: a.alphabet });
  }

  async me(p: Principal): Promise<ContactView & { lastSeenAt: Date | null }> {
    const user = await this.deps.users(p.tenant).findById(oid(p.userId, 'user_not_found'));
    if (!user) throw new AppError('user_not_found', 'The signed-in user no longer exists');
    const [view] = await this.views(p, [user]);
    return { ...view!, lastSeenAt: user.lastSeenAt ?? null };
  }

  async byIds(p: Principal, ids: readonly Types.ObjectId[]): Promise<ContactView[]> {
    const users = await this.deps.users(p.tenant).findByIds(ids);
    return this.views(
      p,
      users.filter((u) => u.status === 'active'),
    );
  }

  async setFavourite(p: Principal, cmd: SetFavouriteCommand): Promise<{ contactId: string; favourite: boolean }> {
    const contactId = oid(cmd.contactId, 'contact_not_found');
    const contact = await this.deps.users(p.tenant).findById(contactId);
    if (!contact || contact.status !== 'active') throw new AppError('contact_not_found', `No contact ${cmd.contactId}`);
    await this.deps.favourites(p.tenant).set(oid(p.userId, 'user_not_found'), contactId, cmd.favourite);
    return { contactId: String(contactId), favourite: cmd.favourite };
  }

  /** Updates the caller's own contact card; the avatar (if any) is stored under its content hash. */
  async update(
    p: Principal,
    cmd: UpdateContactCommand,
    avatar?: { body: Buffer },
  ): Promise<ContactView & { lastSeenAt: Date | null }> {
    const set: Parameters<UserRepository['updateProfile']>[1] = { ...cmd };
    if (avatar) set.avatarHash = await this.storeAvatar(p.tenant, avatar.body);
    const updated = await this.deps.users(p.tenant).updateProfile(oid(p.userId, 'user_not_found'), set);
    if (!updated) throw new AppError('user_not_found', 'The signed-in user no longer exists');
    return this.me(p);
  }

  async alphabets(p: Principal): Promise<{ initial: string; count: number }[]> {
    const me = oid(p.userId, 'user_not_found');
    const visible = await this.deps.visibleTo(p);
    // A patient's care team is small: counted by the database over those ids (decision 230).
    if (visible) return this.deps.users(p.tenant).initials(me, visible);
    return this.deps.search.initials(p.tenant, me);
  }

  private searchUsers(tenant: string, q: UserSearch): Promise<UserRecord[]> {
    return this.deps.search.search(tenant, q);
  }

  private countUsers(tenant: string, q: Omit<UserSearch, 'skip' | 'take' | 'sort'>, cap?: number): Promise<number> {
    return this.deps.search.count(tenant, q, cap);
  }

  /** Presence and favourites for a page of users, in one Redis round trip and one query. */
  async views(p: Principal, users: UserRecord[]): Promise<ContactView[]> {
    const ids = users.map((u) => String(u._id));
    const [online, favs] = await Promise.all([
      this.deps.onlineMany(p.tenant, ids),
      this.deps.favourites(p.tenant).among(
        oid(p.userId, 'user_not_found'),
        users.map((u) => u._id),
      ),
    ]);
    return users.map((user) => ({ user, online: online.has(String(user._id)), favourite: favs.has(String(user._id)) }));
  }

  private async alphabetical(
    p: Principal,
    paging: Paging,
    f: Pick<UserSearch, 'name' | 'initial'>,
  ): Promise<Page<ContactView>> {
    const me = oid(p.userId, 'user_not_found');
    const ids = await this.deps.visibleTo(p);
    if (ids) {
      const [users, total] = await Promise.all([
        this.searchUsers(p.tenant, { ...f, ids, excludeId: me, ...paging }),
        this.countUsers(p.tenant, { ...f, ids, excludeId: me }),
      ]);
      return { items: await this.views(p, users), total, ...paging };
    }
    const [users, counted] = await Promise.all([
      this.searchUsers(p.tenant, { ...f, excludeId: me, ...paging }),
      this.othersTotal(p.tenant, me, f),
    ]);
    return { items: await this.views(p, users), total: pageTotal(paging, users.length, counted), ...paging };
  }

  /**
   * How many contacts other than the caller match: one count per tenant and filter shared by every
   * caller for TOTAL_REUSE_MS, less the caller when their own record matches (decision 210).
   */
  private async othersTotal(
    tenant: string,
    me: Types.ObjectId,
    f: Pick<UserSearch, 'name' | 'initial'>,
  ): Promise<number> {
    const key = JSON.stringify([tenant, f.name ?? '', f.initial ?? '']);
    const repo = this.deps.users(tenant);
    const [all, caller] = await Promise.all([
      this.totals.getOrLoad(key, () => this.countUsers(tenant, f, TOTAL_COUNT_CAP)),
      this.callers.getOrLoad(`${tenant} ${me}`, () => repo.findById(me)),
    ]);
    return Math.max(0, all - (caller && matchesSearch(f, caller) ? 1 : 0));
  }

  private async favouritesFirst(p: Principal, paging: Paging, initial?: string): Promise<Page<ContactView>> {
    const me = oid(p.userId, 'user_not_found');
    const [allFavIds, visible] = await Promise.all([
      this.deps.favourites(p.tenant).contactIds(me),
      this.deps.visibleTo(p),
    ]);
    const allowed = visible && new Set(visible.map(String));
    const favIds = allowed ? allFavIds.filter((id) => allowed.has(String(id))) : allFavIds;
    const favQ = { ids: favIds, initial, excludeId: me };
    const restQ = { notIds: favIds, initial, excludeId: me, ...(visible ? { ids: visible } : {}) };
    const [favTotal, restTotal] = await Promise.all([
      this.countUsers(p.tenant, favQ),
      this.countUsers(p.tenant, restQ),
    ]);
    const favs =
      paging.skip < favTotal ? await this.searchUsers(p.tenant, { ...favQ, skip: paging.skip, take: paging.take }) : [];
    const restSkip = Math.max(0, paging.skip - favTotal);
    const restTake = paging.take - favs.length;
    const rest = restTake > 0 ? await this.searchUsers(p.tenant, { ...restQ, skip: restSkip, take: restTake }) : [];
    return { items: await this.views(p, [...favs, ...rest]), total: favTotal + restTotal, ...paging };
  }

  /** Counterparts from recent calls and meetings, ranked by how often, then how recently. */
  private async ranked(
    p: Principal,
    paging: Paging,
    f: { name?: string; initial?: string },
  ): Promise<Page<ContactView>> {
    const me = oid(p.userId, 'user_not_found');
    const [calls, meetings, visible] = await Promise.all([
      this.deps.calls(p.tenant).recentCounterparts(me, HISTORY_CALLS),
      this.deps.events(p.tenant).recentCounterparts(me, HISTORY_EVENTS),
      this.deps.visibleTo(p),
    ]);
    const allowed = visible && new Set(visible.map(String));
    const score = new Map<string, { id: Types.ObjectId; n: number; last: number }>();
    for (const h of [...calls, ...meetings]) {
      const s = score.get(String(h.id)) ?? { id: h.id, n: 0, last: 0 };
      s.n += 1;
      s.last = Math.max(s.last, h.at.getTime());
      score.set(String(h.id), s);
    }
    const order = [...score.values()].sort((a, b) => b.n - a.n || b.last - a.last);
    const users = await this.deps.users(p.tenant).findByIds(order.map((o) => o.id));
    const byId = new Map(users.map((u) => [String(u._id), u]));
    const matching = order
      .map((o) => byId.get(String(o.id)))
      .filter((u): u is UserRecord => !!u && matchesSearch(f, u) && (!allowed || allowed.has(String(u._id))));
    const pageUsers = matching.slice(paging.skip, paging.skip + paging.take);
    return { items: await this.views(p, pageUsers), total: matching.length, ...paging };
  }

  private async storeAvatar(tenant: string, body: Buffer): Promise<string> {
    if (body.length > AVATAR_MAX_BYTES)
      throw new AppError('payload_too_large', `avatar: at most ${AVATAR_MAX_BYTES} bytes`);
    const type = imageType(body);
    if (!type)
      throw new AppError('file_content_mismatch', 'avatar: must be a PNG, JPEG, GIF or WebP image', {
        errors: [{ field: 'avatar', message: 'not a PNG, JPEG, GIF or WebP image' }],
      });
    const put = await this.deps.store.putContentAddressed(avatarPrefix(tenant), Readable.from([body]), {
      contentType: type,
      maxBytes: AVATAR_MAX_BYTES,
    });
    return put.sha256;
  }
}

/** Avatars live in the tenant's `assets` container, named by content hash (docs/decisions/208-contact-lists.md). */
export function avatarPrefix(tenant: string): string {
  return `t/${tenant}/assets/avatars`;
}

/** Recognises the image formats accepted as avatars by their leading bytes. */
export function imageType(b: Buffer): string | undefined {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (
    b.length >= 6 &&
    (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a')
  )
    return 'image/gif';
  if (
    b.length >= 12 &&
    b.subarray(0, 4).toString('latin1') === 'RIFF' &&
    b.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/**
 * The total of a page, consistent with the page itself: exact when the page is the last one (short
 * and not empty, or the first page); else the counted (or recently counted) total, clamped to what
 * the page proves: at least skip + a full page, at most skip when a later page came back empty.
 */
export function pageTotal(paging: Paging, found: number, counted: number): number {
  if (found < paging.take && (found > 0 || paging.skip === 0)) return paging.skip + found;
  if (found === 0) return Math.min(counted, paging.skip);
  return Math.max(counted, paging.skip + found);
}
