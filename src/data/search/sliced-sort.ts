/**
 * Sorting that never holds the event loop for long: a bottom-up merge sort (stable, like Array#sort)
 * that gives the loop back (setImmediate) whenever a slice of work has run for `sliceMs`. Used where
 * a request can make the service sort a whole tenant's data (the in-memory contact directory's build):
 * 100,000 entries sorted in one go would stall every other request of the node for over a second.
 *
 * The work between two checks runs in a plain synchronous function: V8 optimizes a hot loop there, and
 * not one in an async function that awaits inside it, which ran about six times slower (decision 1137).
 */
const RUN = 512;
/** Merge steps between two checks of the time. */
const MERGE_STEPS = 1024;

/** Gives the event loop back: other callbacks and I/O run before the promise resolves. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Calls `step(from, to)` on consecutive chunks of [0, count), `chunk` at a time, giving the loop back
 * once a slice of work has run for `sliceMs` (checked after each chunk). `step` is where the loop goes.
 */
export async function rangeInSlices(
  count: number,
  step: (from: number, to: number) => void,
  chunk = 256,
  sliceMs = 8,
): Promise<void> {
  let sliceStart = performance.now();
  for (let from = 0; from < count; from += chunk) {
    step(from, Math.min(count, from + chunk));
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** Merges src[i, mid) and src[j, hi) into dst from k, MERGE_STEPS outputs at most; where it stopped. */
function mergeSteps<T>(
  src: T[],
  dst: T[],
  at: { i: number; j: number; k: number },
  mid: number,
  hi: number,
  cmp: (a: T, b: T) => number,
): void {
  let { i, j, k } = at;
  const stop = Math.min(hi, k + MERGE_STEPS);
  while (k < stop) {
    // `<= 0` takes from the left run on ties: stable.
    if (i < mid && (j >= hi || cmp(src[i]!, src[j]!) <= 0)) dst[k++] = src[i++]!;
    else dst[k++] = src[j++]!;
  }
  at.i = i;
  at.j = j;
  at.k = k;
}

/**
 * Sorts a copy of `items`, stable: runs of `run` items sorted at once (Array#sort), then merged in
 * slices. A longer run merges less in JavaScript and holds the loop longer (cheap comparators only).
 */
export async function sortInSlices<T>(
  items: readonly T[],
  cmp: (a: T, b: T) => number,
  sliceMs = 8,
  run = RUN,
): Promise<T[]> {
  let src = items.slice();
  // Sorted runs (Array#sort is stable), then merges of doubling width.
  await rangeInSlices(
    src.length,
    (lo, hi) => {
      const sorted = src.slice(lo, hi).sort(cmp);
      for (let i = 0; i < sorted.length; i++) src[lo + i] = sorted[i]!;
    },
    run,
    sliceMs,
  );
  let dst = new Array<T>(src.length);
  let sliceStart = performance.now();
  for (let width = run; width < src.length; width *= 2) {
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = Math.min(lo + width, src.length);
      const hi = Math.min(lo + 2 * width, src.length);
      const at = { i: lo, j: mid, k: lo };
      while (at.k < hi) {
        mergeSteps(src, dst, at, mid, hi, cmp);
        if (performance.now() - sliceStart >= sliceMs) {
          await nextTurn();
          sliceStart = performance.now();
        }
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/** Runs this long or shorter are sorted at once by `sortRunsInSlices` (about 1 ms with a cheap comparator). */
const RUN_AT_ONCE = 4096;

/** Sorts in place the runs from `g` on until RUN_AT_ONCE items are sorted or a run is too long; the next run. */
function sortShortRuns<T>(items: T[], starts: ArrayLike<number>, g: number, cmp: (a: T, b: T) => number): number {
  let done = 0;
  for (; g + 1 < starts.length && done < RUN_AT_ONCE; g++) {
    const from = starts[g]!;
    const to = starts[g + 1]!;
    if (to - from > RUN_AT_ONCE) break;
    if (to - from < 2) continue;
    const run = items.slice(from, to).sort(cmp);
    for (let i = 0; i < run.length; i++) items[from + i] = run[i]!;
    done += run.length;
  }
  return g;
}

/**
 * Sorts in place each run of `items` between consecutive `starts` (ascending, from 0 to items.length,
 * as a counting sort leaves its groups), giving the loop back like sortInSlices: runs of up to
 * RUN_AT_ONCE items at once (Array#sort), longer ones by sortInSlices in runs of that length.
 */
export async function sortRunsInSlices<T>(
  items: T[],
  starts: ArrayLike<number>,
  cmp: (a: T, b: T) => number,
  sliceMs = 8,
): Promise<void> {
  let sliceStart = performance.now();
  for (let g = 0; g + 1 < starts.length;) {
    const from = starts[g]!;
    const to = starts[g + 1]!;
    if (to - from > RUN_AT_ONCE) {
      const sorted = await sortInSlices(items.slice(from, to), cmp, sliceMs, RUN_AT_ONCE);
      await rangeInSlices(sorted.length, (lo, hi) => {
        for (let i = lo; i < hi; i++) items[from + i] = sorted[i]!;
      });
      g++;
    } else g = sortShortRuns(items, starts, g, cmp);
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** Calls `fn` on each item (and its index) in slices, giving the loop back like sortInSlices. */
export async function eachInSlices<T>(
  items: Iterable<T>,
  fn: (item: T, i: number) => void,
  sliceMs = 8,
): Promise<void> {
  const it = items[Symbol.iterator]();
  let n = 0;
  let done = false;
  const step = () => {
    for (let k = 0; k < 256; k++) {
      const next = it.next();
      if (next.done) return void (done = true);
      fn(next.value, n++);
    }
  };
  let sliceStart = performance.now();
  while (!done) {
    step();
    if (!done && performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** Maps in slices, giving the loop back like sortInSlices. */
export async function mapInSlices<T, R>(items: Iterable<T>, fn: (item: T) => R | R[], sliceMs = 8): Promise<R[]> {
  const out: R[] = [];
  await eachInSlices(
    items,
    (item) => {
      const r = fn(item);
      if (Array.isArray(r)) for (const x of r) out.push(x);
      else out.push(r);
    },
    sliceMs,
  );
  return out;
}

/** First index in [lo, hi) where `before` is false (`before` must be true on a prefix of them), else hi. */
export function lowerBound(lo: number, hi: number, before: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
