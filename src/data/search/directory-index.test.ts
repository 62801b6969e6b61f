import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { Types } from 'mongoose';
import { searchWords, tokensMatch } from '../models/name-tokens.js';
import { DirectoryIndex } from './directory-index.js';
import type { DirectoryEntry, DirectoryQuery } from './directory-entry.js';
import { compareStrings, type StringOrder } from './string-order.js';

/**
 * The index against a plain filter and sort of its entries (the database's rule: every search word a
 * prefix of one of the tokens, ordered by sortName then id), with the token buckets of decision 1137
 * sorted lazily, before and after writes.
 */

const hex = (n: number) => n.toString(16).padStart(24, '0');
const entry = (n: number, sortName: string, nameTokens: string[], initial = sortName.charAt(0).toUpperCase()) =>
  ({ id: hex(n), sortName, initial, nameTokens, role: 'patient', kind: 'person', rank: -1 }) satisfies DirectoryEntry;

/** What the database answers: the page and the count. */
function expected(order: StringOrder, entries: Iterable<DirectoryEntry>, q: DirectoryQuery, cap?: number) {
  const cmp = compareStrings(order);
  const words = searchWords(q.name);
  const ids = q.ids && new Set(q.ids.map(String));
  const out = new Set([...(q.notIds ?? []), ...(q.excludeId ? [q.excludeId] : [])].map(String));
  const found = [...entries]
    .filter(
      (e) =>
        (!q.initial || e.initial === q.initial) &&
        (!ids || ids.has(e.id)) &&
        !out.has(e.id) &&
        tokensMatch(words, e.nameTokens),
    )
    .sort((a, b) => cmp(a.sortName, b.sortName) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    page: found.slice(q.skip, q.skip + q.take).map((e) => e.id),
    count: cap ? Math.min(found.length, cap) : found.length,
  };
}

function answers(index: DirectoryIndex, q: DirectoryQuery, cap?: number) {
  return { page: index.search(q).map(String), count: index.count(q, cap) };
}

/** Entries whose tokens crowd a few buckets: `syllables` joined, so prefixes of every length meet. */
function crowd(count: number, syllables: string[], seed = 7): DirectoryEntry[] {
  let s = seed;
  const pick = () => syllables[(s = (s * 1103515245 + 12345) >>> 0) % syllables.length]!;
  return Array.from({ length: count }, (_, i) => {
    const first = pick() + pick();
    const last = pick() + pick() + pick();
    return entry(i + 1, `${first} ${last}`, [first, last, `${first}${last}${i}`]);
  });
}

const page = (name: string | undefined, skip = 0, take = 10): DirectoryQuery => ({ name, skip, take });

describe('DirectoryIndex token buckets (decision 1137)', () => {
  // Units that order differently by code unit and by code point: a letter from U+F900 (no
  // decomposition) and an astral letter (a surrogate pair); both survive the search words' folding.
  const ALPHABET = ['a', 'b', 'c', '\uFA0E', '\u{20000}'];
  const units = (min: number, max: number) =>
    fc.array(fc.constantFrom(...ALPHABET), { minLength: min, maxLength: max }).map((u) => u.join(''));
  // Most tokens start with one of a few heads of three units (a bucket each), so that buckets hold many
  // rows, in and out of order.
  const HEADS = ['aba', 'ab\uFA0E', '\u{20000}a', 'bbb'];
  const token = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...HEADS), units(0, 3)).map(([head, tail]) => head + tail) },
    { weight: 1, arbitrary: units(1, 6) },
  );
  const tokens = fc.uniqueArray(token, { maxLength: 4 });
  const word = fc.oneof(
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...HEADS), units(1, 2)).map(([head, tail]) => head + tail) },
    { weight: 1, arbitrary: units(1, 6) },
  );
  const query = (n: number) =>
    fc.record({
      name: fc.option(
        fc.oneof(
          word,
          fc.tuple(word, word).map(([a, b]) => `${a} ${b}`),
          fc.constantFrom('', ' ', '-'),
        ),
        { nil: undefined },
      ),
      initial: fc.option(fc.constantFrom('A', 'B', '#'), { nil: undefined }),
      ids: fc.option(fc.uniqueArray(fc.nat(n + 2), { maxLength: 6 }), { nil: undefined }),
      notIds: fc.option(fc.uniqueArray(fc.nat(n + 2), { maxLength: 3 }), { nil: undefined }),
      exclude: fc.option(fc.nat(n + 2), { nil: undefined }),
      skip: fc.nat(n + 1),
      take: fc.integer({ min: 1, max: 12 }),
      cap: fc.option(fc.integer({ min: 1, max: n + 2 }), { nil: undefined }),
      prepared: fc.boolean(),
    });
  const user = (n: number) =>
    fc.record({ sortName: word, tokens }).map(({ sortName, tokens }) => entry(n, sortName, tokens));

  it('answers every query as a plain filter and sort does, in both orders, before and after writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<StringOrder>('code-unit', 'code-point'),
        fc.integer({ min: 0, max: 60 }).chain((n) =>
          fc.tuple(
            fc.tuple(...Array.from({ length: n }, (_, i) => user(i + 1))),
            fc.array(
              fc.oneof(
                query(n).map((q) => ({ kind: 'query' as const, q })),
                fc.nat(n + 4).chain((i) => user(i + 1).map((e) => ({ kind: 'upsert' as const, e }))),
                fc.nat(n + 4).map((i) => ({ kind: 'remove' as const, id: hex(i + 1) })),
              ),
              { maxLength: 30 },
            ),
          ),
        ),
        async (order, [users, steps]) => {
          const index = await DirectoryIndex.build(order, users);
          const held = new Map(users.map((e) => [e.id, e]));
          for (const step of steps) {
            if (step.kind === 'upsert') {
              index.upsert(step.e);
              held.set(step.e.id, step.e);
            } else if (step.kind === 'remove') {
              index.remove(step.id);
              held.delete(step.id);
            } else {
              const { q: r } = step;
              const q: DirectoryQuery = {
                name: r.name,
                initial: r.initial,
                skip: r.skip,
                take: r.take,
                ...(r.ids ? { ids: r.ids.map((i) => new Types.ObjectId(hex(i + 1))) } : {}),
                ...(r.notIds ? { notIds: r.notIds.map((i) => new Types.ObjectId(hex(i + 1))) } : {}),
                ...(r.exclude !== undefined ? { excludeId: new Types.ObjectId(hex(r.exclude + 1)) } : {}),
              };
              if (r.prepared) await index.prepare(q);
              expect(answers(index, q, r.cap)).toEqual(expected(order, held.values(), q, r.cap));
            }
          }
          expect(index.size).toBe(held.size);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sorts no bucket at build, none for words of up to three units, and one per longer word, when first searched', async () => {
    const entries = crowd(2000, ['ka', 'ri', 'mo', 'kar', 'rim']);
    const index = await DirectoryIndex.build('code-unit', entries);
    expect(index.bucketsSorted).toBe(0);
    for (const name of ['k', 'ka', 'kar', 'k r', 'ka ri', '']) {
      expect(answers(index, page(name, 3))).toEqual(expected('code-unit', entries, page(name, 3)));
      expect(index.bucketsSorted).toBe(0);
    }
    // 'kari' and 'karim' share the bucket 'kar'; 'rimo' is in 'rim'.
    expect(index.prepare(page('kari'))).toBeDefined();
    await index.prepare(page('kari'));
    expect(index.bucketsSorted).toBe(1);
    expect(index.prepare(page('karim'))).toBeUndefined();
    expect(answers(index, page('karim', 2))).toEqual(expected('code-unit', entries, page('karim', 2)));
    // Without `prepare`, a search sorts the bucket it needs itself.
    expect(answers(index, page('rimo'))).toEqual(expected('code-unit', entries, page('rimo')));
    expect(index.bucketsSorted).toBe(2);
    for (const name of ['kari', 'kari rimo', 'karimo', 'rimok', 'kariz'])
      expect(answers(index, page(name, 1))).toEqual(expected('code-unit', entries, page(name, 1)));
  });

  it('sorts a bucket once for concurrent searches that need it, in slices of the event loop', async () => {
    const entries = crowd(20_000, ['kar', 'kari', 'karo', 'mo']);
    const index = await DirectoryIndex.build('code-unit', entries);
    const sorts = jest.spyOn(index as unknown as { sortBucketInSlices: () => Promise<void> }, 'sortBucketInSlices');
    let turns = 0;
    let sorting = true;
    const observe = () => {
      if (!sorting) return;
      turns++;
      setImmediate(observe);
    };
    setImmediate(observe);
    // The slices end by the clock (8 ms each): a clock that moves 1 ms at every look makes them end
    // after the same work on any machine, where a fast one sorted the whole bucket in one slice.
    let clock = 0;
    const now = jest.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
    const first = index.prepare(page('karim'));
    const second = index.prepare(page('kari mo'));
    await Promise.all([first, second]).finally(() => now.mockRestore());
    sorting = false;
    expect(sorts).toHaveBeenCalledTimes(1);
    expect(index.bucketsSorted).toBe(1);
    // The loop turned while the bucket was sorted (it holds about 50,000 rows).
    expect(turns).toBeGreaterThan(1);
    for (const name of ['karim', 'kari mo', 'kar'])
      expect(answers(index, page(name, 5))).toEqual(expected('code-unit', entries, page(name, 5)));
  });

  it('applies a sort done in slices only to the rows it sorted: writes meanwhile to the bucket start it again', async () => {
    /** Starts sorting the bucket 'kar' in slices, writes while it runs, then compares every answer. */
    async function writeWhileSorting(writes: (DirectoryEntry | string)[]) {
      const entries = crowd(20_000, ['kar', 'kari', 'karo', 'mo']);
      const index = await DirectoryIndex.build('code-unit', entries);
      const held = new Map(entries.map((e) => [e.id, e]));
      let done = false;
      // A clock that moves 1 ms at every look: the sort's slices (8 ms each) end after the same work on
      // any machine, so it is still under way at the first turn of the loop (see the test above).
      let clock = 0;
      const now = jest.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
      const sorting = index
        .prepare(page('karim'))!
        .then(() => (done = true))
        .finally(() => now.mockRestore());
      // The sort has copied the bucket's rows and gives the loop back: write now.
      await new Promise((resolve) => setImmediate(resolve));
      expect(done).toBe(false);
      for (const w of writes) {
        if (typeof w === 'string') {
          index.remove(w);
          held.delete(w);
        } else {
          index.upsert(w);
          held.set(w.id, w);
        }
      }
      await sorting;
      expect(index.bucketsSorted).toBe(1);
      for (const name of ['karim', 'kara', 'karimo', 'karo', 'karzz', 'kar', 'momo', 'mo', 'zz'])
        expect(answers(index, page(name, 0, 50))).toEqual(expected('code-unit', held.values(), page(name, 0, 50)));
    }
    // A user's rows in the bucket swapped for as many others: the bucket keeps its length.
    const [before] = crowd(1, ['kar', 'kari', 'karo', 'mo']);
    const inBucket = before!.nameTokens.filter((t) => t.startsWith('kar')).length;
    expect(inBucket).toBeGreaterThan(0);
    await writeWhileSorting([entry(1, 'mo mo', ['momo', ...Array.from({ length: inBucket }, (_, k) => `karzz${k}`)])]);
    // Rows added to the bucket and taken out of it.
    await writeWhileSorting([
      entry(90_001, 'kara kari', ['kara', 'karim', 'zz']),
      entry(10, 'mo mo', ['momo', 'karimo', 'karo']),
      hex(11),
    ]);
  });

  it('places writes in sorted buckets by token and entry order, and at the end of buckets not sorted yet', async () => {
    const entries = crowd(500, ['ka', 'ri', 'mo', 'kar', 'rim']);
    const index = await DirectoryIndex.build('code-unit', entries);
    const held = new Map(entries.map((e) => [e.id, e]));
    const check = () => {
      for (const name of ['kari', 'karim', 'rimo', 'rimka', 'kar', 'k', 'ka ri', 'abcd', 'abc'])
        for (const skip of [0, 3])
          expect(answers(index, page(name, skip, 30))).toEqual(
            expected('code-unit', held.values(), page(name, skip, 30)),
          );
    };
    await index.prepare(page('kari')); // 'kar' sorted, 'rim' and 'abc' not
    const write = (e: DirectoryEntry) => (index.upsert(e), held.set(e.id, e));
    // New rows in a sorted bucket, in one not sorted, in a new bucket; a user with two rows in one bucket.
    write(entry(1001, 'aaa', ['karimka', 'rimkar', 'abcd']));
    write(entry(1002, 'zzz', ['karia', 'karib', 'rimo', 'rimoa']));
    write(entry(3, 'kari rimo', ['kari', 'rimo', 'abce']));
    for (const id of [hex(5), hex(1001), hex(7)]) {
      index.remove(id);
      held.delete(id);
    }
    check();
    expect(index.bucketsSorted).toBe(3);
    // And writes once they are all sorted.
    write(entry(1003, 'mmm', ['rimkar', 'kariz', 'abcz']));
    index.remove(hex(1002));
    held.delete(hex(1002));
    check();
  });

  it('keeps its order through a run of writes at one place, which labels entries again (decision 1164)', async () => {
    // Each new user sorts right after 'aaa' (the same name as the one before it, a lower id): the room
    // between two labels halves with each, so after some thirty a window is labelled again, then again.
    const entries = [entry(1, 'aaa', ['aaa']), entry(2, 'zzz', ['zzz', 'mmmz']), entry(3, 'mmn', ['mmn'])];
    const index = await DirectoryIndex.build('code-unit', entries);
    const held = new Map(entries.map((e) => [e.id, e]));
    for (let k = 0; k < 120; k++) {
      const e = entry(10_000 - k, 'mmm', ['mmm', `mm${k % 7}`]);
      index.upsert(e);
      held.set(e.id, e);
      if (k % 5 === 4) {
        // A write elsewhere in the list, and one taken out.
        const other = entry(20_000 + k, `b${k}`, [`b${k}`, 'mmq']);
        index.upsert(other);
        held.set(other.id, other);
        index.remove(hex(10_000 - k + 2));
        held.delete(hex(10_000 - k + 2));
      }
      for (const q of [page('mm', 0, 200), page('mm', 17, 5), page(undefined, 3, 40), page('m b', 0, 50), page('mmm')])
        expect(answers(index, q)).toEqual(expected('code-unit', held.values(), q));
    }
  });

  it('keeps apart two tokens of one bucket whose hashes are equal, sharing only equal tokens', async () => {
    // 'abclvg3195b' and 'abc8xrp5amt' have the same 32-bit FNV-1a hash (found by search): the build
    // matches a token to its first copy by hash, then checks the copy against the token.
    const [a, b] = ['abclvg3195b', 'abc8xrp5amt'];
    const entries = [entry(1, 'p', [a]), entry(2, 'q', [b]), entry(3, 'r', [a, 'zz']), entry(4, 's', [`${b}`])];
    const index = await DirectoryIndex.build('code-unit', entries);
    expect(entries.map((e) => e.nameTokens)).toEqual([[a], [b], [a, 'zz'], [b]]);
    for (const name of ['abcl', 'abc8', a, b, 'abc', 'zz'])
      expect(answers(index, page(name))).toEqual(expected('code-unit', entries, page(name)));
    expect(index.count(page(a))).toBe(2);
    expect(index.count(page(b))).toBe(2);
  });

  it('finds tokens by prefixes of one unit, two, three and more, and none, beyond ASCII, in code-point order', async () => {
    const names = [
      'a',
      'ab',
      'abc',
      'abcd',
      'abc\uFA0E',
      'abc\u{20000}',
      'a\u{20000}b',
      'a\uFA0Eb',
      '\u{20000}',
      '\uFA0E',
      'b',
    ];
    const entries = names.flatMap((t, i) => [entry(2 * i + 1, t, [t]), entry(2 * i + 2, `${t}x`, [`${t}x`, `z${t}`])]);
    for (const order of ['code-point', 'code-unit'] as const) {
      const index = await DirectoryIndex.build(order, entries);
      for (const name of [...names, 'abc\uFA0Ex', 'abc\u{20000}x', 'za', 'zabc\uFA0E', undefined, '', '\u{20000}x'])
        expect(answers(index, page(name, 0, 30))).toEqual(expected(order, entries, page(name, 0, 30)));
    }
  });
});
