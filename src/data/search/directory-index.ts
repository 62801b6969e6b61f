import { eachInSlices, sortInSlices } from './sliced-sort.js';
import { Types } from 'mongoose';
import { searchWords, tokensMatch } from '../models/name-tokens.js';
import type { UserSearch } from '../repositories/user.repository.js';

/**
 * What the in-memory directory keeps of an active user: enough to select, order and count. Compact
 * (decision 1136): the id as its 24 hex digits (ObjectIds are made for a returned page only), role,
 * kind and initial shared (`sharedString`), the tokens one copy per distinct token once indexed.
 */
export interface DirectoryEntry {
  /** The user's `_id`, 24 lower-case hex digits (ordered as the ObjectId's bytes). */
  id: string;
  sortName: string;
  initial: string;
  nameTokens: string[];
  role: string;
  kind: string;
  /** Position in the index's order, kept by the index (give -1). */
  rank: number;
}

/** Values kept once however many users carry them; beyond this many distinct ones, each keeps its own. */
const SHARED_MAX = 4096;
const shared = new Map<string, string>();

/** One copy of a short value many users repeat (role, kind, initial): about 32 bytes a user each, else. */
export function sharedString(s: string): string {
  const kept = shared.get(s);
  if (kept !== undefined) return kept;
  if (shared.size < SHARED_MAX) shared.set(s, s);
  return s;
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

/**
 * One tenant's active users in memory, answering the contact search's selection, order and count
 * exactly as `UserRepository.search`/`count`/`initials` do (the property test in
 * test/integration/directory/contact-directory.test.ts compares them): entries ordered by
 * (sortName, _id), and the tokens in their own sorted rows, so a prefix is a binary-searched range.
 * A token row is a slot of two parallel arrays (its token, its entry), ordered by token, then by the
 * entries' order: no object per row (decision 1136).
 */
export class DirectoryIndex {
  private readonly byId = new Map<string, DirectoryEntry>();
  private sorted: DirectoryEntry[] = [];
  private rowTokens: string[] = [];
  private rowEntries: DirectoryEntry[] = [];
  /** Whether every entry's `rank` is its position in `sorted` (not after a change, until needed). */
  private ranked = true;
  /** Position in `sorted` of each token row's entry. */
  private tokenRanks: Int32Array | undefined;
  /** Positions, in order and each once, of the entries of recently searched token ranges, by `from:to`. */
  private readonly rangeOrders = new Map<string, Int32Array>();
  private readonly cmp: (a: string, b: string) => number;

  constructor(order: StringOrder) {
    this.cmp = compareStrings(order);
  }

  /**
   * Builds the index of a whole tenant without holding the event loop: the sorts and passes run in
   * slices (src/data/search/sliced-sort.ts). The token rows are not sorted as rows: the distinct tokens
   * are (each entry's tokens replaced by their one copy on the way), then each entry's rows are placed
   * at their token's next slot, taking the entries in order (a counting sort).
   */
  static async build(order: StringOrder, entries: readonly DirectoryEntry[]): Promise<DirectoryIndex> {
    const index = new DirectoryIndex(order);
    // Filling the map is sliced too: 100,000 string keys take about 80 ms in one go.
    await eachInSlices(entries, (e) => void index.byId.set(e.id, e));
    const sorted = await sortInSlices([...index.byId.values()], (a, b) => index.entryCmp(a, b));
    const tokenIds = new Map<string, number>();
    const distinct: string[] = [];
    const rowTokenIds: number[] = [];
    await eachInSlices(sorted, (e, at) => {
      e.rank = at;
      const tokens = e.nameTokens;
      for (let k = 0; k < tokens.length; k++) {
        let id = tokenIds.get(tokens[k]!);
        if (id === undefined) {
          id = distinct.length;
          tokenIds.set(tokens[k]!, id);
          distinct.push(tokens[k]!);
        } else tokens[k] = distinct[id]!;
        rowTokenIds.push(id);
      }
    });
    tokenIds.clear();
    const byToken = await sortInSlices(
      Array.from(distinct, (_, id) => id),
      (a, b) => index.cmp(distinct[a]!, distinct[b]!),
    );
    const next = new Int32Array(distinct.length);
    for (const id of rowTokenIds) next[id]!++;
    let slot = 0;
    for (const id of byToken) {
      const n = next[id]!;
      next[id] = slot;
      slot += n;
    }
    const rows = rowTokenIds.length;
    const rowTokens = new Array<string>(rows);
    const rowEntries = new Array<DirectoryEntry>(rows);
    const tokenRanks = new Int32Array(rows);
    let r = 0;
    await eachInSlices(sorted, (e, at) => {
      for (let k = 0; k < e.nameTokens.length; k++) {
        const id = rowTokenIds[r++]!;
        const to = next[id]!++;
        rowTokens[to] = distinct[id]!;
        rowEntries[to] = e;
        tokenRanks[to] = at;
      }
    });
    index.sorted = sorted;
    index.rowTokens = rowTokens;
    index.rowEntries = rowEntries;
    index.tokenRanks = tokenRanks;
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
      this.lowerBound(this.sorted.length, (i) => this.entryCmp(this.sorted[i]!, e) < 0),
      0,
      e,
    );
    for (const token of e.nameTokens) {
      const at = this.rowBound(token, e);
      this.rowTokens.splice(at, 0, token);
      this.rowEntries.splice(at, 0, e);
    }
    this.changed();
  }

  /** Takes a user out (no longer active, or gone). */
  remove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    const at = this.lowerBound(this.sorted.length, (i) => this.entryCmp(this.sorted[i]!, e) < 0);
    if (this.sorted[at] === e) this.sorted.splice(at, 1);
    for (const token of e.nameTokens) {
      const i = this.rowBound(token, e);
      if (this.rowEntries[i] === e) {
        this.rowTokens.splice(i, 1);
        this.rowEntries.splice(i, 1);
      }
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
      out.push(new Types.ObjectId(e.id));
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
      this.rank();
      const at: number[] = [];
      for (const id of ids) {
        const e = this.byId.get(id);
        if (e) at.push(e.rank);
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
        this.rank();
        this.tokenRanks = Int32Array.from(this.rowEntries, (e) => e.rank);
      }
      at = sortedOnce(this.tokenRanks.slice(from, to));
    }
    this.rangeOrders.set(key, at);
    if (this.rangeOrders.size > RANGE_ORDERS_KEPT) this.rangeOrders.delete(this.rangeOrders.keys().next().value!);
    return at;
  }

  /** Positions and the orders of ranges are of the list as it was: dropped on every change. */
  private changed(): void {
    this.ranked = false;
    this.tokenRanks = undefined;
    this.rangeOrders.clear();
  }

  /** Sets every entry's `rank` to its position (after a change; a loop, no map from entry to position). */
  private rank(): void {
    if (this.ranked) return;
    for (let i = 0; i < this.sorted.length; i++) this.sorted[i]!.rank = i;
    this.ranked = true;
  }

  /** [from, to) of the token rows starting with `prefix` (tokens are letters and digits, so code order is safe). */
  private prefixRange(prefix: string): [number, number] {
    const t = this.rowTokens;
    const from = this.lowerBound(t.length, (i) => this.cmp(t[i]!, prefix) < 0);
    const to = this.lowerBound(t.length, (i) => this.cmp(t[i]!, prefix) < 0 || t[i]!.startsWith(prefix));
    return [from, to];
  }

  /** Where the row (token, e) is or goes: rows are ordered by token, then by entry order. */
  private rowBound(token: string, e: DirectoryEntry): number {
    return this.lowerBound(this.rowTokens.length, (i) => {
      const c = this.cmp(this.rowTokens[i]!, token);
      return c < 0 || (c === 0 && this.entryCmp(this.rowEntries[i]!, e) < 0);
    });
  }

  private entryCmp(a: DirectoryEntry, b: DirectoryEntry): number {
    return this.cmp(a.sortName, b.sortName) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  /** First index in [0, n) where `before` is false (`before` must be true on a prefix of the indexes). */
  private lowerBound(n: number, before: (i: number) => boolean): number {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
