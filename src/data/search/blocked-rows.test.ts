import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { BlockedList } from './blocked-rows.js';

/** The ordered list in blocks (decision 1166) against a plain array, in blocks of 2 or 4 so writes split and empty them. */
describe('BlockedList', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), value: fc.nat(999) }),
    fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  );

  it('holds what a plain array holds through inserts and removals, read by position and in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(999), { maxLength: 20 }),
        fc.constantFrom(1, 2),
        fc.array(op, { maxLength: 60 }),
        (start, shift, ops) => {
          const list = new BlockedList(start, shift);
          const model = start.slice();
          for (const o of ops) {
            if (o.kind === 'insert') {
              const at = o.at % (model.length + 1);
              model.splice(at, 0, o.value);
              list.insert(at, o.value);
            } else if (model.length) {
              const at = o.at % model.length;
              model.splice(at, 1);
              list.remove(at);
            }
            expect(list.length).toBe(model.length);
            expect(model.map((_, i) => list.get(i))).toEqual(model);
            const seen: number[] = [];
            list.visit((v) => (seen.push(v), true));
            expect(seen).toEqual(model);
            // A visit stops where its callback answers false.
            const stopAt = Math.floor(model.length / 2);
            const some: number[] = [];
            list.visit((v) => (some.push(v), some.length <= stopAt));
            expect(some).toEqual(model.slice(0, Math.min(model.length, stopAt + 1)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
