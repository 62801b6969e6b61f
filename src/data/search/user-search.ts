import type { Types } from 'mongoose';
import type { UserRecord, UserRepository, UserSearch } from '../repositories/user.repository.js';
import type { ContactDirectory } from './contact-directory.js';

/**
 * The directory's search port (decision 212): a page of users, their count and the alphabet's initials,
 * answered by the in-memory contact directory where it is configured and loaded, else by the user
 * repository's queries. The contact service asks this port and never chooses between the two.
 */
export class UserDirectorySearch {
  constructor(
    private readonly users: (tenant: string) => Pick<UserRepository, 'search' | 'count' | 'initials' | 'findByIds'>,
    /** The in-memory directory; it answers `undefined` until it has loaded the tenant. */
    private readonly directory?: Pick<ContactDirectory, 'search' | 'count' | 'initials'>,
  ) {}

  /** A page of users: selected and ordered in memory where the directory answers, else by the database. */
  async search(tenant: string, q: UserSearch): Promise<UserRecord[]> {
    const repo = this.users(tenant);
    const ids = await this.directory?.search(tenant, q);
    if (!ids) return repo.search(q);
    const byId = new Map((await repo.findByIds(ids)).map((u) => [String(u._id), u]));
    return ids.flatMap((id) => byId.get(String(id)) ?? []);
  }

  /** How many users match, counting no further than `cap` when given. */
  async count(tenant: string, q: Omit<UserSearch, 'skip' | 'take' | 'sort'>, cap?: number): Promise<number> {
    return (await this.directory?.count(tenant, q, cap)) ?? this.users(tenant).count(q, cap);
  }

  /** Alphabet buckets holding at least one active user but `excludeId`, with their sizes. */
  async initials(tenant: string, excludeId?: Types.ObjectId): Promise<{ initial: string; count: number }[]> {
    return (await this.directory?.initials(tenant, excludeId)) ?? this.users(tenant).initials(excludeId);
  }
}
