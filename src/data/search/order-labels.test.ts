import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { LABEL_SPAN, inLabelOrder, labelAt, spread } from './order-labels.js';

/** A plain array read as the index's ordered list. */
const ordered = <T>(a: T[]) => ({
  get length() {
    return a.length;
  },
  get: (i: number) => a[i]!,
});

/** Order labels (decision 1164) against the list they label. */
describe('order labels', () => {
  /** Labels in [0, span), strictly increasing along the list. */
  const inOrder = (list: { rank: number }[], span: number) =>
    list.every((e, i) => e.rank >= 0 && e.rank < span && (i === 0 || list[i - 1]!.rank < e.rank));

  it('keeps every label in order through inserts anywhere, relabelling a window when neighbours leave no room', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(64, 1_000, 2 ** 16),
        fc.array(fc.oneof(fc.nat(), fc.constant(-1)), { maxLength: 60 }),
        (n, span, inserts) => {
          if (n + inserts.length >= span) return;
          const list = Array.from({ length: n }, (_, i) => ({ rank: spread(-1, span, i, n) }));
          expect(inOrder(list, span)).toBe(true);
          for (const where of inserts) {
            // -1: always at the same place (the list's second slot), the case that exhausts room fastest.
            const at = where < 0 ? Math.min(1, list.length) : where % (list.length + 1);
            const before = list.map((e) => e.rank);
            list.splice(at, 0, { rank: -1 });
            if (!labelAt(ordered(list), at, span)) {
              // Without a relabel, no other entry's label changed.
              const others = list.filter((_, i) => i !== at).map((e) => e.rank);
              expect(others).toEqual(before);
            }
            expect(inOrder(list, span)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('labels a window again when a run of writes at one place has used the room there', () => {
    const span = 1_000;
    const list = [{ rank: spread(-1, span, 0, 2) }, { rank: spread(-1, span, 1, 2) }];
    let relabelled = 0;
    for (let k = 0; k < 200; k++) {
      list.splice(1, 0, { rank: -1 });
      if (labelAt(ordered(list), 1, span)) relabelled++;
      expect(inOrder(list, span)).toBe(true);
    }
    // About one write in eight relabels once the room between the first two is used.
    expect(relabelled).toBeGreaterThan(10);
    expect(relabelled).toBeLessThan(100);
  });

  it('spreads the build evenly with room between neighbours', () => {
    for (const n of [1, 2, 1_000, 1_000_000]) {
      const first = spread(-1, LABEL_SPAN, 0, n);
      const second = n > 1 ? spread(-1, LABEL_SPAN, 1, n) : LABEL_SPAN;
      const last = spread(-1, LABEL_SPAN, n - 1, n);
      expect(first).toBeGreaterThan(256);
      expect(second - first).toBeGreaterThan(256);
      expect(last).toBeLessThan(LABEL_SPAN - 256);
    }
  });

  it('orders entries by label, each once, as a sort and a set do', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(LABEL_SPAN - 1), { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 120 }),
        (labels, picks) => {
          const entries = labels.map((rank) => ({ rank }));
          const given = entries.length ? picks.map((p) => entries[p % entries.length]!) : [];
          const expected = [...new Set(given)].sort((a, b) => a.rank - b.rank);
          const got = inLabelOrder(given);
          expect(got).toEqual(expected);
          got.forEach((e, i) => expect(e).toBe(expected[i]));
        },
      ),
      { numRuns: 300 },
    );
  });
});
