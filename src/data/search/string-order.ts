/**
 * The server's string order (decision 212) and the numbers the in-memory directory sorts by in its place
 * (decision 1137): comparing numbers packed from a string's first units, held together in typed arrays,
 * orders as comparing the strings does wherever the numbers differ.
 */
import type { DirectoryEntry } from './directory-entry.js';

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

/**
 * Token rows are grouped in buckets by their first BUCKET_UNITS code units (decision 1137): the build
 * places each row in its bucket without sorting, and a bucket's rows are sorted by token when a search
 * first needs it, for a word longer than BUCKET_UNITS. A shorter word's rows are whole buckets.
 */
export const BUCKET_UNITS = 3;
/** Codes of one unit in a bucket key: 0 for no unit (a shorter token), else 1 + the unit's rank. */
export const UNIT_CODES = 0x10001;

/** Ranks of code units whose order is the server's order: the units themselves, or by code point. */
export const unitRank = (order: StringOrder): ((c: number) => number) =>
  order === 'code-point' ? pointRank : (c) => c;

/**
 * Numbers that order strings from unit `from` on as `compareStrings` does, 7 units in each (`keys[0]`
 * the first 7, `keys[1]` the next 7, ...), written at `at`: 7 bits a unit, 0 for no unit, 1 + its rank
 * below 126, 127 for any other unit and 0 for every unit after that one. Two strings whose numbers
 * differ compare as the numbers do; equal numbers say nothing. Sorting by them compares numbers held
 * together in typed arrays, not strings spread over the heap.
 */
export function packKeys(s: string, from: number, rank: (c: number) => number, keys: Float64Array[], at: number): void {
  let j = from;
  let open = true;
  for (const level of keys) {
    let k = 0;
    for (let u = 0; u < 7; u++, j++) {
      let code = 0;
      if (open && j < s.length) {
        const c = rank(s.charCodeAt(j));
        if (c < 126) code = c + 1;
        else {
          code = 127;
          open = false;
        }
      }
      k = k * 128 + code;
    }
    level[at] = k;
  }
}

/** The entries' sort first groups them by the codes of their sortName's first two units (`packKeys`). */
export const GROUPS = 128 * 128;
export const GROUP_DIVISOR = 128 ** 5;

/** Entries in the database's order: sortName in the server's string order, then `_id`. */
export function entryOrder(cmp: (a: string, b: string) => number): (a: DirectoryEntry, b: DirectoryEntry) => number {
  return (a, b) => cmp(a.sortName, b.sortName) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
