import { describe, expect, it } from '@jest/globals';
import { mapInSlices, rangeInSlices, sortInSlices, sortRunsInSlices } from './sliced-sort.js';

describe('sortInSlices', () => {
  it('sorts exactly as Array#sort, stable, for every size around the run and merge boundaries', async () => {
    for (const n of [0, 1, 2, 511, 512, 513, 1024, 1500, 5000]) {
      const items = Array.from({ length: n }, (_, i) => ({ key: (i * 7919) % 97, seq: i }));
      const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
      expect(await sortInSlices(items, cmp)).toEqual(items.slice().sort(cmp));
    }
  });

  /**
   * Counts what `work` does per turn of the event loop: an observer re-arms an immediate for as long as
   * the work runs, so each of its turns ends where the work gave the loop back. `note()` counts a unit
   * of work (a comparison, a mapped item) in the current turn.
   */
  async function perTurn<T>(work: (note: () => void) => Promise<T>): Promise<{ result: T; turns: number[] }> {
    const turns = [0];
    let done = false;
    const observe = () => {
      if (done) return;
      turns.push(0);
      setImmediate(observe);
    };
    setImmediate(observe);
    try {
      return { result: await work(() => turns[turns.length - 1]!++), turns };
    } finally {
      done = true;
    }
  }

  it('gives the event loop back after a bounded amount of work, whatever the machine', async () => {
    // With a zero slice every checkpoint yields: the work between two checkpoints is then what one turn
    // of the loop does, a property of the code and not of the machine's speed (decision 1050). Runs of
    // 512 are sorted between checkpoints (at most 512 x 9 comparisons), merges yield every 1,024 steps.
    const items = Array.from({ length: 50_000 }, (_, i) => `name ${(i * 104729) % 50_021}`);
    const { result, turns } = await perTurn((note) =>
      sortInSlices(items, (a, b) => (note(), a < b ? -1 : a > b ? 1 : 0), 0),
    );
    expect(result).toEqual(items.slice().sort());
    expect(Math.max(...turns)).toBeLessThanOrEqual(512 * 9);
    // The sort spread over many turns (a sort that kept the loop would do all its work in one).
    expect(turns.filter((n) => n > 0).length).toBeGreaterThan(50);
  });

  it('maps in slices of at most 256 items per turn of the loop', async () => {
    const { result, turns } = await perTurn((note) =>
      mapInSlices(
        Array.from({ length: 10_000 }, (_, i) => i),
        (x) => (note(), x * 2),
        0,
      ),
    );
    expect(result).toHaveLength(10_000);
    expect(Math.max(...turns)).toBeLessThanOrEqual(256);
  });

  it('sorts each run between starts as Array#sort does, short runs at once and long ones in slices', async () => {
    // Runs of 0, 1, 3, 4,096 and 4,097 items (either side of the length sorted at once), then many short ones.
    const lengths = [0, 1, 3, 4096, 4097, ...Array.from({ length: 300 }, (_, i) => i % 7)];
    const starts = [0];
    for (const n of lengths) starts.push(starts[starts.length - 1]! + n);
    const items = Array.from({ length: starts[starts.length - 1]! }, (_, i) => ({ key: (i * 7919) % 89, seq: i }));
    const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
    const expected = lengths.flatMap((_, g) => items.slice(starts[g], starts[g + 1]).sort(cmp));
    const { result, turns } = await perTurn(async (note) => {
      await sortRunsInSlices(items, starts, (a, b) => (note(), cmp(a, b)), 0);
      return items;
    });
    expect(result).toEqual(expected);
    // With a zero slice: at most about 4,096 items sorted at once between two turns of the loop.
    expect(Math.max(...turns)).toBeLessThanOrEqual(2 * 4096 * 13);
    expect(turns.filter((n) => n > 0).length).toBeGreaterThan(5);
  });

  it('runs a range a chunk at a time, giving the loop back between chunks', async () => {
    const seen: number[] = [];
    const { turns } = await perTurn((note) =>
      rangeInSlices(
        10_000,
        (from, to) => {
          for (let i = from; i < to; i++) (note(), seen.push(i));
        },
        100,
        0,
      ),
    );
    expect(seen).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
    expect(Math.max(...turns)).toBe(100);
  });

  it('maps with flattening in slices', async () => {
    expect(await mapInSlices([1, 2, 3], (x) => (x === 2 ? [x, x] : x))).toEqual([1, 2, 2, 3]);
  });
});
