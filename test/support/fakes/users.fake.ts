import { Types, isValidObjectId } from 'mongoose';
import type {
  DirectoryFields,
  UserRecord,
  UserRepository,
  UserSearch,
} from '../../../src/data/repositories/user.repository.js';
import type {
  AccountRecord,
  CredentialRepository,
  SecurityRules,
} from '../../../src/data/repositories/credential.repository.js';
import { sortKeys } from '../../../src/data/models/user.model.js';
import { matchesSearch } from '../../../src/data/models/name-tokens.js';
import { same, type Doc, type FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

type SearchFilter = Omit<UserSearch, 'skip' | 'take' | 'sort'>;

/** `searchFilter` of the real repository, on a stored user. */
function selects(q: SearchFilter, u: Doc): boolean {
  if (!matchesSearch(q, u as unknown as Parameters<typeof matchesSearch>[1])) return false;
  if (q.ids && !q.ids.some((id) => same(id, u._id))) return false;
  if (q.notIds?.some((id) => same(id, u._id))) return false;
  if (q.excludeId && same(q.excludeId, u._id)) return false;
  return true;
}

/** Binary string order, as the server sorts strings without a collation. */
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The user repository on a fake tenant database (src/data/repositories/user.repository.ts). */
export class FakeUserRepository implements PublicPart<UserRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get users() {
    return this.db.collection('User');
  }

  async findById(id: Types.ObjectId): Promise<UserRecord | null> {
    const u = this.users.byId(id);
    return u ? (this.users.read(u) as UserRecord) : null;
  }

  async findByUsername(username: string): Promise<UserRecord | null> {
    const [u] = this.users.find((d) => d.username === username.toLowerCase());
    return (u as UserRecord | undefined) ?? null;
  }

  async findByIds(ids: readonly Types.ObjectId[]): Promise<UserRecord[]> {
    return this.users.find((d) => ids.some((id) => same(id, d._id))) as UserRecord[];
  }

  async existingActiveIds(ids: readonly Types.ObjectId[]): Promise<Set<string>> {
    const rows = this.users.stored((d) => d.status === 'active' && ids.some((id) => same(id, d._id)));
    return new Set(rows.map((r) => String(r._id)));
  }

  async search(q: UserSearch): Promise<UserRecord[]> {
    const rows = this.users.stored((u) => selects(q, u));
    rows.sort((a, b) => byString(String(a.sortName), String(b.sortName)) || byString(String(a._id), String(b._id)));
    return rows.slice(q.skip, q.skip + q.take).map((u) => this.users.read(u) as UserRecord);
  }

  async count(q: SearchFilter, cap?: number): Promise<number> {
    const n = this.users.stored((u) => selects(q, u)).length;
    return cap ? Math.min(n, cap) : n;
  }

  async initials(
    excludeId?: Types.ObjectId,
    onlyIds?: Types.ObjectId[],
  ): Promise<{ initial: string; count: number }[]> {
    const counts = new Map<string, number>();
    for (const u of this.users.stored(
      (d) =>
        d.status === 'active' &&
        (!excludeId || !same(excludeId, d._id)) &&
        (!onlyIds || onlyIds.some((id) => same(id, d._id))),
    )) {
      const i = String(this.users.read(u).initial);
      counts.set(i, (counts.get(i) ?? 0) + 1);
    }
    return [...counts].sort(([a], [b]) => byString(a, b)).map(([initial, count]) => ({ initial, count }));
  }

  async updateProfile(
    id: Types.ObjectId,
    set: Parameters<UserRepository['updateProfile']>[1],
  ): Promise<UserRecord | null> {
    const u = this.users.byId(id);
    if (!u) return null;
    const { after } = this.users.update(u, (d) => {
      Object.assign(d, set);
      if (set.displayName) Object.assign(d, sortKeys(set.displayName, String(d.username)));
    });
    return this.users.read(after) as UserRecord;
  }

  async *directoryCursor(): AsyncIterable<DirectoryFields> {
    for (const u of this.users.find((d) => d.status === 'active', DIRECTORY_FIELDS))
      yield u as unknown as DirectoryFields;
  }

  async directoryFields(ids: readonly Types.ObjectId[]): Promise<(DirectoryFields & { status: string })[]> {
    return this.users.find((d) => ids.some((id) => same(id, d._id)), {
      ...DIRECTORY_FIELDS,
      status: 1,
    }) as unknown as (DirectoryFields & { status: string })[];
  }

  async touchLastSeenMany(entries: readonly { userId: Types.ObjectId; at: Date }[]): Promise<void> {
    for (const { userId, at } of entries) {
      const u = this.users.byId(userId);
      if (!u) continue;
      const was = u.lastSeenAt as Date | undefined;
      if (!was || was < at) this.users.update(u, (d) => void (d.lastSeenAt = at));
    }
  }
}

const DIRECTORY_FIELDS = { _id: 1, sortName: 1, initial: 1, nameTokens: 1, role: 1, kind: 1 } as const;
const ACCOUNT_FIELDS = {
  username: 1,
  idpSubject: 1,
  displayName: 1,
  email: 1,
  kind: 1,
  role: 1,
  status: 1,
  passwordHash: 1,
  pinHash: 1,
  pinHistory: 1,
} as const;

/** The credential repository on a fake tenant database (src/data/repositories/credential.repository.ts). */
export class FakeCredentialRepository implements PublicPart<CredentialRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get users() {
    return this.db.collection('User');
  }

  private one(pred: (d: Doc) => boolean): AccountRecord | null {
    const [u] = this.users.find(pred, ACCOUNT_FIELDS);
    return (u as unknown as AccountRecord | undefined) ?? null;
  }

  async findById(id: string): Promise<AccountRecord | null> {
    if (!isValidObjectId(id)) return null;
    return this.one((d) => same(d._id, new Types.ObjectId(id)));
  }

  async findByUsername(username: string): Promise<AccountRecord | null> {
    const name = username.toLowerCase().trim();
    return this.one((d) => d.username === name);
  }

  async activeIdsWithRoles(roles: string[], limit: number): Promise<string[]> {
    if (!roles.length) return [];
    return this.users
      .stored((d) => d.status === 'active' && roles.includes(String(d.role)))
      .slice(0, limit)
      .map((d) => String(d._id));
  }

  async findBySubject(subject: string): Promise<AccountRecord | null> {
    return this.one((d) => d.idpSubject === subject);
  }

  async setPin(id: string, pinHash: string | null, history: string[]): Promise<void> {
    const u = isValidObjectId(id) ? this.users.byId(id) : undefined;
    if (!u) return;
    this.users.update(u, (d) => {
      if (pinHash) Object.assign(d, { pinHash, pinHistory: history, pinSetAt: new Date() });
      else {
        delete d.pinHash;
        delete d.pinSetAt;
      }
    });
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    const u = isValidObjectId(id) ? this.users.byId(id) : undefined;
    if (u) this.users.update(u, (d) => void (d.passwordHash = passwordHash));
  }

  async setRole(id: string, role: string): Promise<boolean> {
    const u = isValidObjectId(id) ? this.users.byId(id) : undefined;
    if (!u) return false;
    this.users.update(u, (d) => void (d.role = role));
    return true;
  }

  async create(u: Parameters<CredentialRepository['create']>[0]): Promise<string> {
    const username = u.username.toLowerCase().trim();
    const doc = this.users.insert({
      ...u,
      username,
      idpSubject: u.idpSubject ?? username,
      status: 'active',
      ...sortKeys(u.displayName, username),
    });
    return String(doc._id);
  }

  async bindSubject(id: string, from: string, to: string): Promise<boolean> {
    const u = isValidObjectId(id) ? this.users.byId(id) : undefined;
    if (!u || u.idpSubject !== from || from === to) return false;
    this.users.update(u, (d) => void (d.idpSubject = to));
    return true;
  }

  async securityRules(): Promise<SecurityRules | null> {
    const s = this.db.collection('TenantConfig').byId('tenant');
    if (!s) return null;
    const read = this.db.collection('TenantConfig').read(s, { security: 1 });
    return (read.security as SecurityRules | undefined) ?? null;
  }
}
