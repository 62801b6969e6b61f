import { mapInSlices, sortInSlices } from './sliced-sort.js';
import type { Types } from 'mongoose';
import { searchWords, tokensMatch } from '../models/name-tokens.js';
import type { UserSearch } from '../repositories/user.repository.js';

/** What the in-memory directory keeps of an active user: enough to select, order and count. */
export interface DirectoryEntry {
  _id: Types.ObjectId;
  id: string;
  sortName: string;
  initial: string;
  nameTokens: string[];
  role: string;
  kind: string;
}

export type DirectoryQuery = Omit<UserSearch, 'sort'>;
export type StringOrder = 'code-point' | 'code-unit';

/** Maps a UTF-16 code unit so that comparing mapped units orders strings by code point (UTF-8 bytes). */
const pointRank = (c: number) => (c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c);

/** String comparison in the server's order (decision 212). */
export function compareStrings(order: StringOrder): (a: string, b: string) => number {
  if (order === 'code-unit') return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return (a, b) => {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a.charCodeAt(i);
      const y = b.charCodeAt(i);
      if (x !== y) return pointRank(x) - pointRank(y);
    }
    return a.length - b.length;
  };
}

/** How many token ranges' entry orders an index keeps (each up to 4 bytes per row of the range). */
const RANGE_ORDERS_KEPT = 32;

/** Sorts positions ascending and drops repeats (a user with two tokens in one range). */
function sortedOnce(at: Int32Array): Int32Array {
  at.sort();
  let n = 0;
  for (let i = 0; i < at.length; i++) if (i === 0 || at[i] !== at[i - 1]) at[n++] = at[i]!;
  return n === at.length ? at : at.slice(0, n);
}

interface TokenRow {
  token: string;
  e: DirectoryEntry;
}

/**
 * One tenant's active users in memory, answering the contact search's selection, order and count
 * exactly as `UserRepository.search`/`count`/`initials` do (the property test in
 * test/integration/directory/contact-directory.test.ts compares them): entries ordered by
 * (sortName, _id), and the tokens in their own sorted array, so a prefix is a binary-searched range.
 */
export class DirectoryIndex {
  private readonly byId = new Map<string, DirectoryEntry>();
  private sorted: DirectoryEntry[] = [];
  private tokens: TokenRow[] = [];
  private ranks: Map<DirectoryEntry, number> | undefined;
  /** Position in `sorted` of each token row's entry (built with `ranks`). */
  private tokenRanks: Int32Array | undefined;
  /** Positions, in order and each once, of the entries of recently searched token ranges, by `from:to`. */
  private readonly rangeOrders = new Map<string, Int32Array>();
  private readonly cmp: (a: string, b: string) => number;

  constructor(order: StringOrder, entries: readonly DirectoryEntry[] = []) {
    this.cmp = compareStrings(order);
    for (const e of entries) this.byId.set(e.id, e);
    this.sorted = [...this.byId.values()].sort((a, b) => this.entryCmp(a, b));
    this.tokens = this.sorted
      .flatMap((e) => e.nameTokens.map((token) => ({ token, e })))
      .sort((a, b) => this.tokenCmp(a, b));
  }

  /**
   * Builds the index of a whole tenant without holding the event loop: the sorts run in slices
   * (src/data/search/sliced-sort.ts). The constructor does the same work in one go (small lists, tests).
   */
  static async build(order: StringOrder, entries: readonly DirectoryEntry[]): Promise<DirectoryIndex> {
    const index = new DirectoryIndex(order);
    // Filling the map is sliced too: 100,000 string keys take about 80 ms in one go.
    await mapInSlices(entries, (e) => void index.byId.set(e.id, e));
    index.sorted = await sortInSlices([...index.byId.values()], (a, b) => index.entryCmp(a, b));
    const rows = await mapInSlices(index.sorted, (e) => e.nameTokens.map((token): TokenRow => ({ token, e })));
    index.tokens = await sortInSlices(rows, (a, b) => index.tokenCmp(a, b));
    return index;
  }

  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Adds or replaces an active user. */
  upsert(e: DirectoryEntry): void {
    this.remove(e.id);
    this.byId.set(e.id, e);
    this.sorted.splice(
      this.lowerBound(this.sorted, (x) => this.entryCmp(x, e) < 0),
      0,
      e,
    );
    for (const token of e.nameTokens) {
      const row: TokenRow = { token, e };
      this.tokens.splice(
        this.lowerBound(this.tokens, (x) => this.tokenCmp(x, row) < 0),
        0,
        row,
      );
    }
    this.changed();
  }

  /** Takes a user out (no longer active, or gone). */
  remove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    const at = this.lowerBound(this.sorted, (x) => this.entryCmp(x, e) < 0);
    if (this.sorted[at] === e) this.sorted.splice(at, 1);
    for (const token of e.nameTokens) {
      const row: TokenRow = { token, e };
      const i = this.lowerBound(this.tokens, (x) => this.tokenCmp(x, row) < 0);
      if (this.tokens[i]?.e === e) this.tokens.splice(i, 1);
    }
    this.changed();
  }

  /** The ids of one page, in the database's order (sortName, then _id). */
  search(q: DirectoryQuery): Types.ObjectId[] {
    const out: Types.ObjectId[] = [];
    let skip = q.skip;
    this.each(q, (e) => {
      if (skip > 0) {
        skip--;
        return true;
      }
      if (out.length >= q.take) return false;
      out.push(e._id);
      return out.length < q.take;
    });
    return out;
  }

  /** How many match, counting no further than `cap` when given (as `countDocuments` with `limit`). */
  count(q: Omit<DirectoryQuery, 'skip' | 'take'>, cap?: number): number {
    const whole = this.countWhole(q);
    if (whole !== undefined) return cap ? Math.min(whole, cap) : whole;
    let n = 0;
    this.each(q, () => {
      n++;
      return !(cap && n >= cap);
    });
    return n;
  }

  /**
   * The count of a search by at most one word and exclusions only (the page total of every plain
   * search), without visiting the entries: the whole list, or the entries of the word's token range
   * (each once), less the excluded ones that match. Else undefined.
   */
  private countWhole(q: Omit<DirectoryQuery, 'skip' | 'take'>): number | undefined {
    if (q.initial || q.ids) return undefined;
    const words = searchWords(q.name);
    if (words.length > 1) return undefined;
    let n = this.sorted.length;
    if (words.length) n = this.rangeOrder(...this.prefixRange(words[0]!)).length;
    const out = new Set([...(q.notIds ?? []), ...(q.excludeId ? [q.excludeId] : [])].map(String));
    for (const id of out) {
      const e = this.byId.get(id);
      if (e && tokensMatch(words, e.nameTokens)) n--;
    }
    return n;
  }

  /** Alphabet buckets holding at least one contact other than `excludeId`, with their sizes, by bucket. */
  initials(excludeId?: Types.ObjectId): { initial: string; count: number }[] {
    const counts = new Map<string, number>();
    const skip = excludeId ? String(excludeId) : undefined;
    for (const e of this.byId.values()) if (e.id !== skip) counts.set(e.initial, (counts.get(e.initial) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => this.cmp(a, b)).map(([initial, count]) => ({ initial, count }));
  }

  /**
   * Calls `visit` with the matching entries in order until it answers false: from the token range of
   * the search's rarest word, else the whole list. The candidates of a range (or of an id list) are put
   * in order by a numeric sort of their positions, each once (a user may have two tokens in one range),
   * and a range's order is kept until the index changes; a comparator over the entries, and a generator
   * per entry, cost about 8% of a node's CPU time at 100,000 users (B6 profile; decision 212, addendum
   * of 2026-11-27).
   */
  private each(q: Omit<DirectoryQuery, 'skip' | 'take'>, visit: (e: DirectoryEntry) => boolean): void {
    const words = searchWords(q.name);
    const ids = q.ids ? new Set(q.ids.map(String)) : undefined;
    const out = new Set([...(q.notIds ?? []), ...(q.excludeId ? [q.excludeId] : [])].map(String));
    const keep = (e: DirectoryEntry) =>
      (!q.initial || e.initial === q.initial) &&
      (!ids || ids.has(e.id)) &&
      !out.has(e.id) &&
      tokensMatch(words, e.nameTokens);
    if (ids && ids.size < this.sorted.length / 8) {
      const ranks = this.rankMap();
      const at: number[] = [];
      for (const id of ids) {
        const e = this.byId.get(id);
        if (e) at.push(ranks.get(e)!);
      }
      return this.visitPositions(sortedOnce(Int32Array.from(at)), keep, visit);
    }
    if (words.length) {
      const ranges = words.map((w) => this.prefixRange(w));
      const [from, to] = ranges.reduce((a, b) => (b[1] - b[0] < a[1] - a[0] ? b : a));
      if (to - from < this.sorted.length) return this.visitPositions(this.rangeOrder(from, to), keep, visit);
    }
    for (const e of this.sorted) if (keep(e) && !visit(e)) return;
  }

  /** Visits the entries at these positions of the ordered list (ascending, each once). */
  private visitPositions(
    at: Int32Array,
    keep: (e: DirectoryEntry) => boolean,
    visit: (e: DirectoryEntry) => boolean,
  ): void {
    for (let i = 0; i < at.length; i++) {
      const e = this.sorted[at[i]!]!;
      if (keep(e) && !visit(e)) return;
    }
  }

  /**
   * The positions of the entries of token rows [from, to), ascending and each once. Kept for the last
   * RANGE_ORDERS_KEPT ranges until the index changes: a prefix is searched again for each page and by
   * each user typing it.
   */
  private rangeOrder(from: number, to: number): Int32Array {
    const key = `${from}:${to}`;
    let at = this.rangeOrders.get(key);
    if (at) this.rangeOrders.delete(key);
    else {
      if (!this.tokenRanks) {
        const ranks = this.rankMap();
        this.tokenRanks = Int32Array.from(this.tokens, (r) => ranks.get(r.e)!);
      }
      at = sortedOnce(this.tokenRanks.slice(from, to));
    }
    this.rangeOrders.set(key, at);
    if (this.rangeOrders.size > RANGE_ORDERS_KEPT) this.rangeOrders.delete(this.rangeOrders.keys().next().value!);
    return at;
  }

  /** Positions and the orders of ranges are of the list as it was: dropped on every change. */
  private changed(): void {
    this.ranks = undefined;
    this.tokenRanks = undefined;
    this.rangeOrders.clear();
  }

  private rankMap(): Map<DirectoryEntry, number> {
    if (!this.ranks) this.ranks = new Map(this.sorted.map((e, i) => [e, i]));
    return this.ranks;
  }

  /** [from, to) of the token rows starting with `prefix` (tokens are letters and digits, so code order is safe). */
  private prefixRange(prefix: string): [number, number] {
    const from = this.lowerBound(this.tokens, (r) => this.cmp(r.token, prefix) < 0);
    const to = this.lowerBound(this.tokens, (r) => this.cmp(r.token, prefix) < 0 || r.token.startsWith(prefix));
    return [from, to];
  }

  private entryCmp(a: DirectoryEntry, b: DirectoryEntry): number {
    return this.cmp(a.sortName, b.sortName) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  private tokenCmp(a: TokenRow, b: TokenRow): number {
    return this.cmp(a.token, b.token) || (a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0);
  }

  /** First index where `before` is false (`before` must be true on a prefix of the array). */
  private lowerBound<T>(arr: readonly T[], before: (x: T) => boolean): number {
    let lo = 0;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(arr[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
