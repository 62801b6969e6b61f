/**
 * Order labels of the in-memory directory's entries (decision 1164): each entry's `rank` is a number that
 * orders as the entries do, with room between neighbours, so a write labels its one entry (between its
 * neighbours' labels) and no other entry's label, and no token row, changes. When two neighbours leave
 * no room, a window around the new entry is labelled again, evenly, growing until it has room to spare:
 * labels change, their order never does. Before, each entry's position in the list was kept in every
 * token row, and a write shifted the positions of all of them (about 25 ms a write at 1,000,000 users).
 */

/** Labels lie in [0, LABEL_SPAN): room for several hundred writes between two of 1,000,000 entries. */
export const LABEL_SPAN = 2 ** 29;
/** Most entries `inLabelOrder` packs with their label into one double (LABEL_SPAN * RANGE_MAX = 2 ** 53). */
const RANGE_MAX = 2 ** 24;
/** Labels a window must have per entry before it is labelled again (so a run of writes at one place is cheap). */
const ROOM = 8;

/** A list read by position (the index's ordered entries). */
export interface Ordered<T> {
  readonly length: number;
  get(i: number): T;
}

/** The label of the `i`th of `n` entries spread evenly over the labels strictly between `lo` and `hi`. */
export function spread(lo: number, hi: number, i: number, n: number): number {
  return lo + Math.floor(((i + 1) * (hi - lo)) / (n + 1));
}

/**
 * Labels the entry at `at` of `sorted` (ordered, every other entry labelled in [0, span)): between its
 * neighbours' labels, or with a window around it labelled again. Whether other entries' labels changed.
 */
export function labelAt(sorted: Ordered<{ rank: number }>, at: number, span = LABEL_SPAN): boolean {
  const n = sorted.length;
  const lo = at > 0 ? sorted.get(at - 1).rank : -1;
  const hi = at < n - 1 ? sorted.get(at + 1).rank : span;
  if (hi - lo >= 2) {
    sorted.get(at).rank = lo + Math.floor((hi - lo) / 2);
    return false;
  }
  for (let w = ROOM; ; w *= 2) {
    const a = Math.max(0, at - w);
    const b = Math.min(n - 1, at + w);
    const l = a > 0 ? sorted.get(a - 1).rank : -1;
    const h = b < n - 1 ? sorted.get(b + 1).rank : span;
    const count = b - a + 1;
    if (h - l - 1 >= count * ROOM || (a === 0 && b === n - 1)) {
      for (let i = a; i <= b; i++) sorted.get(i).rank = spread(l, h, i - a, count);
      return true;
    }
  }
}

/** These entries in the order of their labels, each once (an entry may be given more than once). */
export function inLabelOrder<E extends { rank: number }>(entries: readonly E[]): E[] {
  const n = entries.length;
  const out: E[] = [];
  if (n > RANGE_MAX) {
    for (const e of new Set(entries)) out.push(e);
    return out.sort((a, b) => a.rank - b.rank);
  }
  // A numeric sort of label and index packed in one number: no comparator call per pair.
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = entries[i]!.rank * RANGE_MAX + i;
  keys.sort();
  let last = -1;
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    const label = Math.floor(k / RANGE_MAX);
    if (label === last) continue;
    last = label;
    out.push(entries[k - label * RANGE_MAX]!);
  }
  return out;
}
