/**
 * Sorting that never holds the event loop for long: a bottom-up merge sort (stable, like Array#sort)
 * that gives the loop back (setImmediate) whenever a slice of work has run for `sliceMs`. Used where
 * a request can make the service sort a whole tenant's data (the in-memory contact directory's build):
 * 100,000 entries sorted in one go would stall every other request of the node for over a second.
 */
const RUN = 512;

export async function sortInSlices<T>(items: readonly T[], cmp: (a: T, b: T) => number, sliceMs = 8): Promise<T[]> {
  let sliceStart = performance.now();
  const maybeYield = async (): Promise<void> => {
    if (performance.now() - sliceStart < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  let src = items.slice();
  // Sorted runs of RUN elements (Array#sort is stable), then merges of doubling width.
  for (let lo = 0; lo < src.length; lo += RUN) {
    const run = src.slice(lo, lo + RUN).sort(cmp);
    for (let i = 0; i < run.length; i++) src[lo + i] = run[i]!;
    await maybeYield();
  }
  let dst = new Array<T>(src.length);
  for (let width = RUN; width < src.length; width *= 2) {
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = Math.min(lo + width, src.length);
      const hi = Math.min(lo + 2 * width, src.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        // `<= 0` takes from the left run on ties: stable.
        dst[k++] = cmp(src[i]!, src[j]!) <= 0 ? src[i++]! : src[j++]!;
        if ((k & 1023) === 0) await maybeYield();
      }
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
      await maybeYield();
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/** Calls `fn` on each item (and its index) in slices, giving the loop back like sortInSlices. */
export async function eachInSlices<T>(
  items: Iterable<T>,
  fn: (item: T, i: number) => void,
  sliceMs = 8,
): Promise<void> {
  let sliceStart = performance.now();
  let n = 0;
  for (const item of items) {
    fn(item, n);
    if ((++n & 255) === 0 && performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
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
