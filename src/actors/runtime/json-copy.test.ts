import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { jsonCopy } from './json-copy.js';

/** What a reply copy was before jsonCopy, and still is by definition: the value or the error of JSON. */
function viaJson(value: unknown): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(JSON.stringify(value)) };
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
}

function viaCopy(value: unknown): { value: unknown } | { error: string } {
  try {
    return { value: jsonCopy(value) };
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
}

describe('jsonCopy (a turn reply copied as JSON would copy it)', () => {
  it('equals a JSON round trip over generated values, plain or not', () => {
    const anything = fc.anything({
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withBigInt: true,
      withObjectString: true,
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), anything), (v) => {
        expect(viaCopy(v)).toStrictEqual(viaJson(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('copies what JSON drops, nulls or converts as JSON does', () => {
    const date = new Date('2026-01-02T03:04:05.000Z');
    const odd = {
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, Symbol('s'), NaN, -0, Infinity, 1],
      zero: -0,
      at: date,
      nested: { toJSON: () => 'custom' },
      holes: [1, , 3],
    };
    expect(jsonCopy(odd)).toStrictEqual(JSON.parse(JSON.stringify(odd)));
    const { at: _date, nested: _custom, ...plain } = odd;
    expect(jsonCopy(plain)).toStrictEqual(JSON.parse(JSON.stringify(plain)));
  });

  it('keeps a `__proto__` key a key, never a prototype', () => {
    const copied = jsonCopy({ outer: JSON.parse('{"__proto__": {"x": 1}}') as object });
    expect(Object.keys(copied.outer)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(copied.outer)).toBe(Object.prototype);
  });

  it('shares nothing with the value it copied', () => {
    const state = { members: { a: { role: 'host' } }, ids: ['x'] };
    const copied = jsonCopy({ members: Object.values(state.members), ids: state.ids });
    copied.members[0]!.role = 'changed';
    copied.ids.push('y');
    expect(state).toEqual({ members: { a: { role: 'host' } }, ids: ['x'] });
  });

  it('throws what JSON throws for a cycle or a BigInt', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => jsonCopy(cycle)).toThrow(TypeError);
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
  });
});
