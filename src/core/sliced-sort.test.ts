import { describe, expect, it } from '@jest/globals';
import { mapInSlices, sortInSlices } from './sliced-sort.js';

describe('sortInSlices', () => {
  it('sorts exactly as Array#sort, stable, for every size around the run and merge boundaries', async () => {
    for (const n of [0, 1, 2, 511, 512, 513, 1024, 1500, 5000]) {
      const items = Array.from({ length: n }, (_, i) => ({ key: (i * 7919) % 97, seq: i }));
      const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
      expect(await sortInSlices(items, cmp)).toEqual(items.slice().sort(cmp));
    }
  });

  it('gives the event loop back while sorting a large list', async () => {
    const items = Array.from({ length: 200_000 }, (_, i) => `name ${(i * 104729) % 200_003}`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const sorted = await sortInSlices(items, (a, b) => (a < b ? -1 : a > b ? 1 : 0), 4);
    clearInterval(timer);
    expect(sorted).toEqual(items.slice().sort());
    // A sort that kept the loop would let no interval tick at all until it finished.
    expect(ticks).toBeGreaterThan(5);
  });

  it('maps with flattening in slices', async () => {
    expect(await mapInSlices([1, 2, 3], (x) => (x === 2 ? [x, x] : x))).toEqual([1, 2, 2, 3]);
  });
});
