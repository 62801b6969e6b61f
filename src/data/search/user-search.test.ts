import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { UserDirectorySearch } from './user-search.js';
import type { UserRecord, UserSearch } from '../repositories/user.repository.js';

const [a, b, c] = [new Types.ObjectId(), new Types.ObjectId(), new Types.ObjectId()];
const user = (_id: Types.ObjectId, username: string) => ({ _id, username }) as unknown as UserRecord;
const q: UserSearch = { skip: 0, take: 10 };

/** A repository that answers by its queries and records which it was asked. */
function repo(asked: string[]) {
  return () => ({
    search: async () => (asked.push('search'), [user(a, 'from-db')]),
    count: async () => (asked.push('count'), 41),
    initials: async () => (asked.push('initials'), [{ initial: 'D', count: 41 }]),
    findByIds: async (ids: Types.ObjectId[]) => (asked.push('findByIds'), ids.map((id) => user(id, String(id)))),
  });
}

describe('the directory search port (decision 212)', () => {
  it('answers from the in-memory directory where it answers, in its order, with the users read by id', async () => {
    const asked: string[] = [];
    const search = new UserDirectorySearch(repo(asked), {
      search: async () => [c, b],
      count: async () => 2,
      initials: async () => [{ initial: 'M', count: 2 }],
    });
    expect((await search.search('acme', q)).map((u) => u._id)).toEqual([c, b]);
    expect(await search.count('acme', {}, 100)).toBe(2);
    expect(await search.initials('acme', a)).toEqual([{ initial: 'M', count: 2 }]);
    expect(asked).toEqual(['findByIds']);
  });

  it("falls back to the repository's queries while the directory has not loaded the tenant, or without one", async () => {
    for (const directory of [
      { search: async () => undefined, count: async () => undefined, initials: async () => undefined },
      undefined,
    ]) {
      const asked: string[] = [];
      const search = new UserDirectorySearch(repo(asked), directory);
      expect((await search.search('acme', q)).map((u) => u.username)).toEqual(['from-db']);
      expect(await search.count('acme', {})).toBe(41);
      expect(await search.initials('acme')).toEqual([{ initial: 'D', count: 41 }]);
      expect(asked).toEqual(['search', 'count', 'initials']);
    }
  });
});
