import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { TokenRows } from './token-rows.js';

/** The rows against plain arrays, in blocks of 2 or 4 rows so that writes split and empty them. */
describe('TokenRows (decision 1137)', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      token: fc.string({ maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant('set' as const),
      at: fc.nat(),
      token: fc.string({ maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('setToken' as const), at: fc.nat(), token: fc.string({ maxLength: 3 }) }),
  );

  it('holds what plain arrays hold through inserts, removals and sets', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.constantFrom(1, 2), fc.array(op, { maxLength: 60 }), (count, shift, ops) => {
        const rows = new TokenRows<{ n: number }>(count, shift);
        const model: { token: string; entry: { n: number } }[] = [];
        for (let i = 0; i < count; i++) {
          model.push({ token: `t${i}`, entry: { n: i } });
          rows.set(i, `t${i}`, model[i]!.entry);
        }
        let n = count;
        for (const o of ops) {
          if (o.kind === 'insert') {
            const at = o.at % (model.length + 1);
            const row = { token: o.token, entry: { n: n++ } };
            model.splice(at, 0, row);
            rows.insert(at, row.token, row.entry);
          } else if (!model.length) continue;
          else if (o.kind === 'remove') {
            const at = o.at % model.length;
            model.splice(at, 1);
            rows.remove(at);
          } else if (o.kind === 'set') {
            const at = o.at % model.length;
            model[at] = { token: o.token, entry: { n: n++ } };
            rows.set(at, o.token, model[at]!.entry);
          } else {
            const at = o.at % model.length;
            model[at]!.token = o.token;
            rows.setToken(at, o.token);
          }
          expect(rows.length).toBe(model.length);
          for (let i = 0; i < model.length; i++) {
            expect(rows.token(i)).toBe(model[i]!.token);
            expect(rows.entry(i)).toBe(model[i]!.entry);
          }
          const from = Math.floor(model.length / 3);
          const to = model.length - from;
          expect(rows.copy(from, to).entries).toEqual(model.slice(from, to).map((r) => r.entry));
          // indexOf finds a row by its token and entry (each row's entry is its own here), within the range asked.
          if (model.length) {
            const last = model.length - 1;
            const probe = model[last]!;
            expect(rows.indexOf(0, model.length, probe.token, probe.entry)).toBe(last);
            expect(rows.indexOf(0, last, probe.token, probe.entry)).toBe(-1);
            expect(rows.indexOf(0, model.length, `${probe.token}x`, probe.entry)).toBe(-1);
          }
          const copy = rows.copy(0, model.length);
          expect(copy.tokens).toEqual(model.map((r) => r.token));
          expect(copy.entries).toEqual(model.map((r) => r.entry));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('splits a block that grows to twice its size, and drops an emptied one', () => {
    const rows = new TokenRows<number>(8, 2);
    for (let i = 0; i < 8; i++) rows.set(i, `t${i}`, i);
    for (let k = 0; k < 4; k++) rows.insert(1, `n${k}`, 100 + k);
    expect(rows.length).toBe(12);
    expect(rows.copy(0, 12).tokens).toEqual(['t0', 'n3', 'n2', 'n1', 'n0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
    for (let k = 0; k < 4; k++) rows.remove(8);
    expect(rows.copy(0, 8).tokens).toEqual(['t0', 'n3', 'n2', 'n1', 'n0', 't1', 't2', 't3']);
    expect(rows.token(7)).toBe('t3');
    rows.insert(8, 'end', 9);
    expect(rows.token(8)).toBe('end');
  });
});
