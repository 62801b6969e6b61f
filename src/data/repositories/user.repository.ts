import { Types } from 'mongoose';
import type { FindOptions } from 'mongodb';
import type { TenantDb } from '../mongo.js';
import { bulkUpdate } from './bulk-updates.js';
import { sortKeys, type UserDoc } from '../models/user.model.js';
import { matchesSearch, searchWords } from '../models/name-tokens.js';

/** How long one batch of the directory's load may take (decision 1139). */
export const DIRECTORY_BATCH_TIMEOUT_MS = 10 * 60_000;

export type UserRecord = UserDoc & { _id: Types.ObjectId; createdAt?: Date; updatedAt?: Date };

export interface UserSearch {
  /** Words each of which prefixes a token of the display name or username (case and accents ignored; decision 211). */
  name?: string;
  /** Alphabet bucket (`A`..`Z` or `#`). */
  initial?: string;
  /** Restrict to these ids (favourites, frequent contacts, group members). */
  ids?: Types.ObjectId[];
  /** Leave these out (favourites already listed first). */
  notIds?: Types.ObjectId[];
  excludeId?: Types.ObjectId;
  skip: number;
  take: number;
  sort?: 'name' | 'recent';
}

/** Escapes user input for a literal match inside a regular expression. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether `user` is among the users `searchFilter` selects for a name/alphabet search: the same rule
 * in memory (src/data/models/name-tokens.ts, where core services may import it without a repository).
 */
export { matchesSearch };

/**
 * The database filter of a contact search. The name is only ever anchored prefix regexes on
 * `nameTokens` (one per search word), which MongoDB answers from the `{nameTokens: 1}` index with
 * index bounds; the words are letters and digits only, escaped all the same.
 */
export function searchFilter(q: Omit<UserSearch, 'skip' | 'take' | 'sort'>): Record<string, unknown> {
  const f: Record<string, unknown> = { status: 'active' };
  const words = searchWords(q.name);
  if (words.length === 1) f.nameTokens = new RegExp(`^${escapeRegex(words[0]!)}`);
  else if (words.length > 1) f.$and = words.map((w) => ({ nameTokens: new RegExp(`^${escapeRegex(w)}`) }));
  if (q.initial) f.initial = q.initial;
  const idCond: Record<string, unknown> = {};
  if (q.ids) idCond.$in = q.ids;
  const out = [...(q.notIds ?? []), ...(q.excludeId ? [q.excludeId] : [])];
  if (out.length) idCond.$nin = out;
  if (Object.keys(idCond).length) f._id = idCond;
  return f;
}

/** What the in-memory contact directory reads of a user (decision 212). */
export interface DirectoryFields {
  _id: Types.ObjectId;
  sortName: string;
  initial: string;
  nameTokens?: string[];
  role: string;
  kind: string;
}
const DIRECTORY_FIELDS = { _id: 1, sortName: 1, initial: 1, nameTokens: 1, role: 1, kind: 1 } as const;

/** Users of one tenant: the directory (contacts) and the subjects of presence. */
export class UserRepository {
  constructor(private readonly db: TenantDb) {}

  private get User() {
    return this.db.models.User;
  }

  findById(id: Types.ObjectId): Promise<UserRecord | null> {
    return this.User.findById(id).lean<UserRecord>().exec();
  }

  findByUsername(username: string): Promise<UserRecord | null> {
    return this.User.findOne({ username: username.toLowerCase() }).lean<UserRecord>().exec();
  }

  /** One query for many ids (the batch function of GraphQL loaders and presenters). */
  findByIds(ids: readonly Types.ObjectId[]): Promise<UserRecord[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.User.find({ _id: { $in: ids } })
      .lean<UserRecord[]>()
      .exec();
  }

  /** Counts which of `ids` are active users of this tenant (participant validation). */
  async existingActiveIds(ids: readonly Types.ObjectId[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.User.find({ _id: { $in: ids }, status: 'active' }, { _id: 1 })
      .lean<{ _id: Types.ObjectId }[]>()
      .exec();
    return new Set(rows.map((r) => String(r._id)));
  }

  private filter(q: Omit<UserSearch, 'skip' | 'take' | 'sort'>): Record<string, unknown> {
    return searchFilter(q);
  }

  search(q: UserSearch): Promise<UserRecord[]> {
    return this.User.find(this.filter(q))
      .sort({ sortName: 1, _id: 1 })
      .skip(q.skip)
      .limit(q.take)
      .lean<UserRecord[]>()
      .exec();
  }

  /**
   * How many users match, counting no further than `cap` when given (the database stops there, so a
   * directory-wide count costs at most `cap` index entries or documents instead of the whole tenant).
   */
  count(q: Omit<UserSearch, 'skip' | 'take' | 'sort'>, cap?: number): Promise<number> {
    return this.User.countDocuments(this.filter(q), cap ? { limit: cap } : {}).exec();
  }

  /** Alphabet buckets that hold at least one active contact, with their sizes. */
  async initials(
    excludeId?: Types.ObjectId,
    onlyIds?: Types.ObjectId[],
  ): Promise<{ initial: string; count: number }[]> {
    const match: Record<string, unknown> = { status: 'active' };
    if (excludeId || onlyIds)
      match._id = { ...(excludeId ? { $ne: excludeId } : {}), ...(onlyIds ? { $in: onlyIds } : {}) };
    const rows = await this.User.aggregate<{ _id: string; count: number }>([
      { $match: match },
      { $group: { _id: '$initial', count: { $sum: 1 } } },
      { $sort: { _id: 1 } },
    ]).exec();
    return rows.map((r) => ({ initial: r._id, count: r.count }));
  }

  /** A new display name brings its sort key, alphabet bucket and search tokens (with the username's) along. */
  async updateProfile(
    id: Types.ObjectId,
    set: Partial<
      Pick<
        UserDoc,
        'displayName' | 'firstName' | 'lastName' | 'title' | 'department' | 'phone' | 'email' | 'avatarHash'
      >
    >,
  ): Promise<UserRecord | null> {
    const $set: Record<string, unknown> = { ...set };
    if (set.displayName) {
      const current = await this.User.findById(id, { username: 1 }).lean<{ username: string }>().exec();
      if (!current) return null;
      Object.assign($set, sortKeys(set.displayName, current.username));
    }
    const after = await this.User.findByIdAndUpdate(id, { $set }, { returnDocument: 'after' })
      .lean<UserRecord>()
      .exec();
    if (after && set.displayName) await this.db.usersChanged([String(id)]);
    return after;
  }

  /** Active users' directory fields, streamed in `_id` order (the in-memory directory's load). */
  directoryCursor(): AsyncIterable<DirectoryFields> {
    // Batches of 1,000: each batch is decoded in its own task, so loading a large tenant never holds the
    // event loop for long (one 5,000-document batch held it about 150 ms, decision 641). Each batch may
    // take up to DIRECTORY_BATCH_TIMEOUT_MS, not the connection's socket timeout: a server without a
    // cursor that streams (mongo-java-server) answers the first batch only once it has read the whole
    // collection, 62 s for 1,000,000 users on the embedded default (decision 1139).
    return this.User.collection.find(
      { status: 'active' },
      {
        projection: DIRECTORY_FIELDS,
        batchSize: 1000,
        // The driver takes an operation's own socketTimeoutMS before the connection's (its timeoutMS,
        // the documented way, is a no-op in this driver line).
        ...({ socketTimeoutMS: DIRECTORY_BATCH_TIMEOUT_MS } as FindOptions),
      },
    ) as unknown as AsyncIterable<DirectoryFields>;
  }

  /** Directory fields and status of these users (what changed since the directory was loaded). */
  directoryFields(ids: readonly Types.ObjectId[]): Promise<(DirectoryFields & { status: string })[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.User.collection
      .find({ _id: { $in: [...ids] } }, { projection: { ...DIRECTORY_FIELDS, status: 1 } })
      .toArray() as unknown as Promise<(DirectoryFields & { status: string })[]>;
  }

  /**
   * Only moves lastSeenAt forward (`$max`), so a late write from a slow node never rewinds it. The filter
   * is the `_id` alone: the one filter every MongoDB-wire server resolves without a scan.
   */
  async touchLastSeenMany(entries: readonly { userId: Types.ObjectId; at: Date }[]): Promise<void> {
    await bulkUpdate(
      this.db.server,
      this.User.collection,
      entries.map(({ userId, at }) => ({
        updateOne: { filter: { _id: userId }, update: { $max: { lastSeenAt: at } } },
      })),
    );
  }
}
