import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ById } from './by-id.js';

describe('ById (decision 1137)', () => {
  it('holds what a Map holds through sets, replacements, deletions and rebuilds', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), id: fc.nat(40) }),
      fc.record({ kind: fc.constant('delete' as const), id: fc.nat(40) }),
      fc.record({ kind: fc.constant('reserve' as const), count: fc.nat(60) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const table = new ById<{ id: string; n: number }>();
        const map = new Map<string, { id: string; n: number }>();
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'set') {
            const e = { id: `id${o.id}`, n: n++ };
            expect(table.set(e)).toBe(!map.has(e.id));
            map.set(e.id, e);
          } else if (o.kind === 'delete') expect(table.delete(`id${o.id}`)).toBe(map.delete(`id${o.id}`));
          else table.reserve(o.count);
          expect(table.size).toBe(map.size);
          for (let k = 0; k <= 40; k++) {
            expect(table.get(`id${k}`)).toBe(map.get(`id${k}`));
            expect(table.has(`id${k}`)).toBe(map.has(`id${k}`));
          }
          expect([...table.values()].sort((a, b) => a.n - b.n)).toEqual([...map.values()].sort((a, b) => a.n - b.n));
        }
      }),
      { numRuns: 300 },
    );
  });
});
