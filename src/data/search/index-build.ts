import { rangeInSlices, sortRunsInSlices } from './sliced-sort.js';
import { TokenRows } from './token-rows.js';
import { BlockedList } from './blocked-rows.js';
import { ById } from './by-id.js';
import { BucketIds, FirstByHash } from './build-tables.js';
import { LABEL_SPAN, spread } from './order-labels.js';
import type { DirectoryEntry } from './directory-entry.js';
import {
  BUCKET_UNITS,
  GROUP_DIVISOR,
  GROUPS,
  UNIT_CODES,
  compareStrings,
  entryOrder,
  packKeys,
  unitRank,
  type StringOrder,
} from './string-order.js';

/** What an index holds: its entries by id, in order, and their token rows by bucket. */
export interface IndexParts {
  byId: ById<DirectoryEntry>;
  sorted: BlockedList<DirectoryEntry>;
  rows: TokenRows<DirectoryEntry>;
}

/**
 * Builds the index of a whole tenant without holding the event loop: every pass runs in slices
 * (src/data/search/sliced-sort.ts). The passes over the entries and their tokens take them in the
 * order they came, which is the order they lie in memory; the others work on typed arrays:
 * - the entries are sorted by numbers packed from their sortName's first 21 units (`packKeys`), first
 *   grouped by the first two (a counting sort), comparing the strings themselves only where all equal;
 * - each token row is counted in its bucket, then placed at its bucket's next slot (a counting sort);
 * - bucket by bucket, each token is replaced by its first copy (`FirstByHash`, by hashes computed
 *   in the first pass, each copy checked against its token), in the rows and in the entries' own
 *   lists: one copy of each distinct token, as before decision 1137.
 * `onPhase` hears how long each phase took (bench/directory-memory.ts).
 */
export async function buildIndex(
  order: StringOrder,
  entries: readonly DirectoryEntry[],
  onPhase?: (phase: string, ms: number) => void,
): Promise<IndexParts> {
  const byId = new ById<DirectoryEntry>();
  const rank = unitRank(order);
  const entryCmp = entryOrder(compareStrings(order));
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    onPhase?.(name, now - mark);
    mark = now;
  };
  // Each pass runs a chunk at a time (rangeInSlices), giving the event loop back between chunks when
  // its slice is due: filling the id table alone takes some 100 ms at 100,000 users.
  byId.reserve(entries.length);
  let replaced = false;
  await rangeInSlices(entries.length, (from, to) => {
    for (let i = from; i < to; i++) if (!byId.set(entries[i]!)) replaced = true;
  });
  // The entries in the order they came (the order they lie in memory), the last of an id only, in an
  // array of the build's own (passes over the caller's list ran measurably slower).
  const input = replaced ? entries.filter((e) => byId.get(e.id) === e) : entries.slice();
  phase('id map');

  const n = input.length;
  const keys = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  const [k0, k1, k2] = keys as [Float64Array, Float64Array, Float64Array];
  const groupStarts = new Int32Array(GROUPS + 1);
  let rows = 0;
  await rangeInSlices(n, (from, to) => {
    for (let i = from; i < to; i++) {
      const e = input[i]!;
      packKeys(e.sortName, 0, rank, keys, i);
      groupStarts[Math.floor(k0[i]! / GROUP_DIVISOR) + 1]!++;
      rows += e.nameTokens.length;
    }
  });
  for (let g = 0; g < GROUPS; g++) groupStarts[g + 1]! += groupStarts[g]!;
  const groupNext = groupStarts.slice();
  const byOrder = new Array<number>(n);
  await rangeInSlices(
    n,
    (from, to) => {
      for (let i = from; i < to; i++) byOrder[groupNext[Math.floor(k0[i]! / GROUP_DIVISOR)]!++] = i;
    },
    4096,
  );
  await sortRunsInSlices(
    byOrder,
    groupStarts,
    (a, b) => k0[a]! - k0[b]! || k1[a]! - k1[b]! || k2[a]! - k2[b]! || entryCmp(input[a]!, input[b]!),
  );
  const rankOf = new Int32Array(n);
  const sorted = new Array<DirectoryEntry>(n);
  await rangeInSlices(
    n,
    (from, to) => {
      for (let at = from; at < to; at++) {
        const i = byOrder[at]!;
        sorted[at] = input[i]!;
        rankOf[i] = at;
      }
    },
    4096,
  );
  phase('entries sort');

  // Rows numbered in the entries' own order: each row's bucket and its token's hash, read together.
  const rowHash = new Int32Array(rows);
  const rowBucket = new Int32Array(rows);
  const bucketIds = new BucketIds();
  const bucketRows: number[] = [];
  let r = 0;
  await rangeInSlices(n, (from, to) => {
    for (let i = from; i < to; i++) {
      const tokens = input[i]!.nameTokens;
      for (let k = 0; k < tokens.length; k++) {
        // Its hash (FNV-1a, as `hashOf`) and its bucket key (as `bucketKey`) in one reading.
        const token = tokens[k]!;
        let h = 0x811c9dc5;
        let key = 0;
        for (let c = 0; c < token.length; c++) {
          const u = token.charCodeAt(c);
          h = Math.imul(h ^ u, 0x01000193);
          if (c < BUCKET_UNITS) key = key * UNIT_CODES + rank(u) + 1;
        }
        for (let c = token.length; c < BUCKET_UNITS; c++) key *= UNIT_CODES;
        const b = bucketIds.id(key);
        if (b === bucketRows.length) bucketRows.push(1);
        else bucketRows[b]!++;
        rowHash[r] = h;
        rowBucket[r++] = b;
      }
    }
  });
  // Buckets in key order; each row written at its bucket's next slot, taking the entries in their
  // own order again (so reading them in memory order, writing to each bucket in turn).
  const bucketKeys = bucketIds.keys;
  const next = new Int32Array(bucketKeys.length);
  const bucketEnds: number[] = [];
  let slot = 0;
  for (const b of Array.from(bucketKeys, (_, b) => b).sort((a, b) => bucketKeys[a]! - bucketKeys[b]!)) {
    next[b] = slot;
    bucketEnds.push((slot += bucketRows[b]!));
  }
  const placed = new TokenRows<DirectoryEntry>(rows);
  const slotHash = new Int32Array(rows);
  const rowSlot = new Int32Array(rows);
  r = 0;
  await rangeInSlices(n, (from, to) => {
    for (let i = from; i < to; i++) {
      const e = input[i]!;
      const tokens = e.nameTokens;
      for (let k = 0; k < tokens.length; k++, r++) {
        const to = next[rowBucket[r]!]!++;
        placed.set(to, tokens[k]!, e);
        slotHash[to] = rowHash[r]!;
        rowSlot[r] = to;
      }
    }
  });
  phase('token rows placed by bucket');

  // Bucket by bucket, each row's token replaced by the first with its hash; then, entry by entry, the
  // entry's tokens by their rows' when equal (the hashes of two tokens may be), else the row's put back.
  const copies = new FirstByHash();
  let bucket = -1;
  let bucketEnd = 0;
  await rangeInSlices(
    rows,
    (from, to) => {
      for (let at = from; at < to; at++) {
        if (at === bucketEnd) {
          bucketEnd = bucketEnds[++bucket]!;
          copies.reset(bucketEnd - at);
        }
        const token = copies.of(placed.token(at), slotHash[at]!);
        if (!copies.first) placed.setToken(at, token);
      }
    },
    1024,
  );
  r = 0;
  await rangeInSlices(n, (from, to) => {
    for (let i = from; i < to; i++) {
      const e = input[i]!;
      e.rank = spread(-1, LABEL_SPAN, rankOf[i]!, n);
      const tokens = e.nameTokens;
      for (let k = 0; k < tokens.length; k++) {
        const at = rowSlot[r++]!;
        const copy = placed.token(at);
        if (copy === tokens[k]) tokens[k] = copy;
        else placed.setToken(at, tokens[k]!);
      }
    }
  });
  phase('one copy of each token');
  return { byId, sorted: new BlockedList(sorted), rows: placed };
}
