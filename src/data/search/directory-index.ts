import { lowerBound, sortInSlices } from './sliced-sort.js';
import type { RowCopy, TokenRows } from './token-rows.js';
import { inLabelOrder, labelAt } from './order-labels.js';
import type { BlockedList } from './blocked-rows.js';
import type { ById } from './by-id.js';
import { Types } from 'mongoose';
import { searchWords, tokensMatch } from '../models/name-tokens.js';
import type { DirectoryEntry, DirectoryQuery } from './directory-entry.js';
import { buildIndex, type IndexParts } from './index-build.js';
import {
  BUCKET_UNITS,
  UNIT_CODES,
  compareStrings,
  entryOrder,
  packKeys,
  unitRank,
  type StringOrder,
} from './string-order.js';

/** How many token ranges' entry orders an index keeps (each up to 4 bytes per row of the range, in a heap array). */
const RANGE_ORDERS_KEPT = 32;

const rankOf = (e: DirectoryEntry) => e.rank;

/**
 * One tenant's active users in memory, answering the contact search's selection, order and count
 * exactly as `UserRepository.search`/`count`/`initials` do (the property test in
 * test/integration/directory/contact-directory.test.ts compares them): entries ordered by
 * (sortName, _id), and the tokens in their own rows, so a prefix is a binary-searched range.
 * A token row is a slot of parallel arrays (its token, its entry), held in blocks
 * (src/data/search/token-rows.ts): no object per row (decision 1136). Each entry's `rank` is its order
 * label (src/data/search/order-labels.ts, decision 1164): a write labels its entry and moves its rows,
 * and touches nothing else.
 *
 * The rows are ordered by bucket, the token's first BUCKET_UNITS code units (decision 1137). Within a
 * bucket they are in no order until a search needs the bucket sorted (`sortedBuckets`), then by token
 * and entry order. A search word of up to BUCKET_UNITS units selects whole buckets, sorted or not; a
 * longer one, a range of its one bucket, sorted first. Every range's entries are put in order by their
 * labels (`rangeOrder`), so the order of the rows within a range changes no answer.
 */ export class DirectoryIndex {
  private readonly byId: ById<DirectoryEntry>;
  /** The entries in order, in blocks (decision 1166). */
  private sorted: BlockedList<DirectoryEntry>;
  /** The token rows: token and entry. */
  private rows: TokenRows<DirectoryEntry>;
  /** The entries, in order and each once, of recently searched words' token ranges, by word. */
  private readonly rangeOrders = new Map<string, DirectoryEntry[]>();
  /** Keys of the buckets whose rows are ordered by token, then entry order. */
  private readonly sortedBuckets = new Set<number>();
  /** Bucket sorts under way in slices (`prepare`), by bucket key: a second search waits for the first. */
  private readonly bucketSorts = new Map<number, Promise<void>>();
  private readonly cmp: (a: string, b: string) => number;
  private readonly rank: (c: number) => number;

  private readonly entryCmp: (a: DirectoryEntry, b: DirectoryEntry) => number;

  private constructor(order: StringOrder, parts: IndexParts) {
    this.cmp = compareStrings(order);
    this.rank = unitRank(order);
    this.entryCmp = entryOrder(this.cmp);
    ({ byId: this.byId, sorted: this.sorted, rows: this.rows } = parts);
  }

  /**
   * Builds the index of a whole tenant without holding the event loop (`buildIndex`, every pass in
   * slices). `onPhase` hears how long each phase took (bench/directory-memory.ts).
   */
  static async build(
    order: StringOrder,
    entries: readonly DirectoryEntry[],
    onPhase?: (phase: string, ms: number) => void,
  ): Promise<DirectoryIndex> {
    return new DirectoryIndex(order, await buildIndex(order, entries, onPhase));
  }

  get size(): number {
    return this.byId.size;
  }

  /** How many token buckets are sorted so far (observability and tests). */
  get bucketsSorted(): number {
    return this.sortedBuckets.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Adds or replaces an active user. */
  upsert(e: DirectoryEntry): void {
    this.remove(e.id);
    this.byId.set(e);
    const at = lowerBound(0, this.sorted.length, (i) => this.entryCmp(this.sorted.get(i), e) < 0);
    this.sorted.insert(at, e);
    labelAt(this.sorted, at);
    for (const token of e.nameTokens) this.rows.insert(this.rowBound(token, e), token, e);
    this.forget(e);
  }

  /** Takes a user out (no longer active, or gone). */
  remove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    const at = lowerBound(0, this.sorted.length, (i) => this.entryCmp(this.sorted.get(i), e) < 0);
    if (at < this.sorted.length && this.sorted.get(at) === e) this.sorted.remove(at);
    for (const token of e.nameTokens) {
      const row = this.findRow(token, e);
      if (row >= 0) this.rows.remove(row);
    }
    this.forget(e);
  }

  /**
   * Sorts, in slices, the token buckets this query's search words will need (words longer than
   * BUCKET_UNITS, in buckets not yet sorted), each once: a search that needs a bucket already being
   * sorted waits for that sort. Undefined when nothing is to be sorted. `search` and `count` sort a
   * bucket they need at once themselves; the contact directory calls this first, so they never do.
   */
  prepare(q: Pick<DirectoryQuery, 'name'>): Promise<void> | undefined {
    let waits: Promise<void>[] | undefined;
    for (const word of searchWords(q.name)) {
      if (word.length <= BUCKET_UNITS) continue;
      const key = this.bucketKey(word);
      if (this.sortedBuckets.has(key)) continue;
      let sorting = this.bucketSorts.get(key);
      if (!sorting) {
        sorting = this.sortBucketInSlices(key).finally(() => this.bucketSorts.delete(key));
        this.bucketSorts.set(key, sorting);
      }
      (waits ??= []).push(sorting);
    }
    return waits && Promise.all(waits).then(() => undefined);
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
    if (words.length) n = this.rangeOrder(words[0]!).length;
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
    this.sorted.visit((e) => {
      if (e.id !== skip) counts.set(e.initial, (counts.get(e.initial) ?? 0) + 1);
      return true;
    });
    return [...counts].sort(([a], [b]) => this.cmp(a, b)).map(([initial, count]) => ({ initial, count }));
  }

  /**
   * Calls `visit` with the matching entries in order until it answers false: from the token range of
   * the search's rarest word, else the whole list. The candidates of a range (or of an id list) are put
   * in order by a numeric sort of their labels, each once (a user may have two tokens in one range),
   * and a range's order is kept until a write in the range; a comparator over the entries, and a generator
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
      const found: DirectoryEntry[] = [];
      for (const id of ids) {
        const e = this.byId.get(id);
        if (e) found.push(e);
      }
      return visitEntries(inLabelOrder(found), keep, visit);
    }
    if (words.length) {
      let narrowest = words[0]!;
      let size = Infinity;
      for (const w of words) {
        const [from, to] = this.prefixRange(w);
        if (to - from < size) [narrowest, size] = [w, to - from];
      }
      if (size < this.sorted.length) return visitEntries(this.rangeOrder(narrowest), keep, visit);
    }
    this.sorted.visit((e) => !keep(e) || visit(e));
  }

  /**
   * The entries of the rows of a search word's token range, in order and each once. Kept for the last
   * RANGE_ORDERS_KEPT words until a write in their range (`forget`): a prefix is searched again for each
   * page and by each user typing it. Sorting a bucket does not drop them: it changes the order of a
   * range's rows, not which rows it holds.
   */
  private rangeOrder(word: string): DirectoryEntry[] {
    let order = this.rangeOrders.get(word);
    if (order) this.rangeOrders.delete(word);
    else {
      const [from, to] = this.prefixRange(word);
      order = inLabelOrder(this.rows.entries(from, to));
    }
    this.rangeOrders.set(word, order);
    if (this.rangeOrders.size > RANGE_ORDERS_KEPT) this.rangeOrders.delete(this.rangeOrders.keys().next().value!);
    return order;
  }

  /**
   * Drops the kept orders of the words whose token range holds a row of this entry (written or taken
   * out): a word of up to BUCKET_UNITS units holds whole buckets, a longer one lies in its one bucket.
   */
  private forget(e: DirectoryEntry): void {
    if (!this.rangeOrders.size) return;
    const keys = e.nameTokens.map((t) => this.bucketKey(t));
    for (const word of this.rangeOrders.keys()) {
      const from = this.bucketKey(word);
      const to = from + (word.length < BUCKET_UNITS ? UNIT_CODES ** (BUCKET_UNITS - word.length) : 1);
      if (keys.some((k) => k >= from && k < to)) this.rangeOrders.delete(word);
    }
  }

  /**
   * The bucket key of a token, or the lowest key of the tokens starting with a shorter prefix: its first
   * BUCKET_UNITS units, each coded 1 + its rank (0 for no unit), as the digits of a number. Keys order
   * as the tokens' first units do, and the tokens starting with a prefix of p <= BUCKET_UNITS units
   * have the keys from the prefix's key to that plus UNIT_CODES ** (BUCKET_UNITS - p) - 1.
   */
  private bucketKey(s: string): number {
    let key = 0;
    for (let i = 0; i < BUCKET_UNITS; i++) key = key * UNIT_CODES + (i < s.length ? this.rank(s.charCodeAt(i)) + 1 : 0);
    return key;
  }

  /** The first token row whose bucket key is `key` or more (the rows are ordered by bucket key). */
  private rowsFromKey(key: number): number {
    return lowerBound(0, this.rows.length, (i) => this.bucketKey(this.rows.token(i)) < key);
  }

  /** [from, to) of the token rows starting with `prefix` (tokens are letters and digits, so code order is safe). */
  private prefixRange(prefix: string): [number, number] {
    const key = this.bucketKey(prefix);
    if (prefix.length <= BUCKET_UNITS)
      return [this.rowsFromKey(key), this.rowsFromKey(key + UNIT_CODES ** (BUCKET_UNITS - prefix.length))];
    const [start, end] = this.sortedBucket(key);
    const t = this.rows;
    const from = lowerBound(start, end, (i) => this.cmp(t.token(i), prefix) < 0);
    const to = lowerBound(from, end, (i) => this.cmp(t.token(i), prefix) < 0 || t.token(i).startsWith(prefix));
    return [from, to];
  }

  /** [from, to) of the bucket's rows, sorted now if they are not. */
  private sortedBucket(key: number): [number, number] {
    const from = this.rowsFromKey(key);
    const to = this.rowsFromKey(key + 1);
    if (!this.sortedBuckets.has(key)) {
      const rows = this.rows.copy(from, to);
      this.placeInOrder(from, rows, this.tokenOrder(rows).sort());
      this.sortedBuckets.add(key);
    }
    return [from, to];
  }

  /**
   * Sorts a bucket in slices of the event loop's time. Writes may land meanwhile: the rows are copied
   * first, and their order is applied only if the bucket still holds those rows (writes elsewhere only
   * move it, and keep the entries' order); else it starts again, and after three tries sorts at once.
   */
  private async sortBucketInSlices(key: number): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let from = this.rowsFromKey(key);
      const rows = this.rows.copy(from, this.rowsFromKey(key + 1));
      const order = this.tokenOrder(rows);
      const byToken = await sortInSlices(order.items, order.cmp);
      if (this.sortedBuckets.has(key)) return; // a search sorted it meanwhile
      from = this.rowsFromKey(key);
      if (this.rowsFromKey(key + 1) - from === rows.tokens.length && this.holds(from, rows)) {
        this.placeInOrder(from, rows, byToken);
        this.sortedBuckets.add(key);
        return;
      }
    }
    this.sortedBucket(key);
  }

  /** Whether the rows from `from` are these (tokens and entries), in this order. */
  private holds(from: number, rows: RowCopy<DirectoryEntry>): boolean {
    for (let i = 0; i < rows.tokens.length; i++)
      if (this.rows.entry(from + i) !== rows.entries[i] || this.rows.token(from + i) !== rows.tokens[i]) return false;
    return true;
  }

  /**
   * How to order a bucket's rows by token, then by entry order: their numbers compared, by numbers
   * packed from the tokens' units after the bucket's (`packKeys`), then by the tokens themselves, then
   * by the entries' labels as they are now (writes while a sort runs in slices may label entries again,
   * never changing their order). `sort()` sorts at once.
   */
  private tokenOrder(rows: RowCopy<DirectoryEntry>): {
    items: number[];
    cmp: (a: number, b: number) => number;
    sort: () => number[];
  } {
    const { tokens } = rows;
    const ranks = Int32Array.from(rows.entries, rankOf);
    const keys = [new Float64Array(tokens.length), new Float64Array(tokens.length)];
    for (let i = 0; i < tokens.length; i++) packKeys(tokens[i]!, BUCKET_UNITS, this.rank, keys, i);
    const [k0, k1] = keys as [Float64Array, Float64Array];
    const items = Array.from(tokens, (_, i) => i);
    const cmp = (a: number, b: number) =>
      k0[a]! - k0[b]! || k1[a]! - k1[b]! || this.cmp(tokens[a]!, tokens[b]!) || ranks[a]! - ranks[b]!;
    return { items, cmp, sort: () => items.sort(cmp) };
  }

  /** Writes the copied rows back from `from` in this order. */
  private placeInOrder(from: number, rows: RowCopy<DirectoryEntry>, order: readonly number[]): void {
    for (let i = 0; i < order.length; i++) {
      const was = order[i]!;
      this.rows.set(from + i, rows.tokens[was]!, rows.entries[was]!);
    }
  }

  /**
   * Where the row (token, e) goes: in a sorted bucket, by token then entry order; in a bucket not
   * sorted, at its end.
   */
  private rowBound(token: string, e: DirectoryEntry): number {
    const key = this.bucketKey(token);
    if (!this.sortedBuckets.has(key)) return this.rowsFromKey(key + 1);
    return lowerBound(this.rowsFromKey(key), this.rowsFromKey(key + 1), (i) => {
      const c = this.cmp(this.rows.token(i), token);
      return c < 0 || (c === 0 && this.entryCmp(this.rows.entry(i), e) < 0);
    });
  }

  /** The row (token, e), or -1: found by its order in a sorted bucket, else by a look through the bucket. */
  private findRow(token: string, e: DirectoryEntry): number {
    const key = this.bucketKey(token);
    const from = this.rowsFromKey(key);
    const to = this.rowsFromKey(key + 1);
    let i = from;
    if (this.sortedBuckets.has(key)) i = this.rowBound(token, e);
    return this.rows.indexOf(i, to, token, e);
  }
}

/** Visits these entries (in order, each once) that `keep` accepts, until `visit` answers false. */
function visitEntries(
  entries: readonly DirectoryEntry[],
  keep: (e: DirectoryEntry) => boolean,
  visit: (e: DirectoryEntry) => boolean,
): void {
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (keep(e) && !visit(e)) return;
  }
}
