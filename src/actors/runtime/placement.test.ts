import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import {
  ActorAddressSchema,
  addressKey,
  checkedAddress,
  parseAddressKey,
  rendezvousOwner,
  shardOf,
} from './placement.js';

describe('placement', () => {
  it('maps an address to the same shard every time, within range', () => {
    const a = { tenant: 'acme', kind: 'meeting' as const, id: 'ev-1' };
    expect(shardOf(a, 256)).toBe(shardOf({ ...a }, 256));
    for (let i = 0; i < 200; i++) {
      const s = shardOf({ ...a, id: `ev-${i}` }, 256);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(256);
    }
  });

  it('round-trips address keys, including ids with slashes', () => {
    const a = { tenant: 'acme', kind: 'device' as const, id: 'dev/42/x' };
    expect(parseAddressKey(addressKey(a))).toEqual(a);
    expect(parseAddressKey('acme/nope/1')).toBeUndefined();
  });

  it('moves only the shards won by a joining node and spreads them evenly', () => {
    const before = ['n1', 'n2', 'n3'];
    const after = [...before, 'n4'];
    let moved = 0;
    const counts = new Map<string, number>();
    for (let s = 0; s < 256; s++) {
      const o1 = rendezvousOwner(s, before);
      const o2 = rendezvousOwner(s, after)!;
      counts.set(o2, (counts.get(o2) ?? 0) + 1);
      if (o1 !== o2) {
        moved++;
        expect(o2).toBe('n4');
      }
    }
    expect(moved).toBe(counts.get('n4'));
    for (const n of after) expect(counts.get(n)).toBeGreaterThan(256 / 4 / 2);
    expect(rendezvousOwner(0, [])).toBeUndefined();
  });

  it('checks addresses exactly as the schema does, keeping only their three fields', () => {
    const cases: unknown[] = [
      { tenant: 'acme', kind: 'call', id: 'c1' },
      { tenant: 'acme', kind: 'call', id: 'c1', extra: 1 },
      { tenant: '', kind: 'call', id: 'c1' },
      { tenant: 'a'.repeat(101), kind: 'call', id: 'c1' },
      { tenant: 'a'.repeat(100), kind: 'device', id: 'x' },
      { tenant: 'acme', kind: 'nope', id: 'c1' },
      { tenant: 'acme', kind: 'meeting', id: '' },
      { tenant: 'acme', kind: 'meeting', id: 'i'.repeat(201) },
      { tenant: 'acme', kind: 'meeting', id: 'i'.repeat(200) },
      { tenant: 1, kind: 'call', id: 'c1' },
      null,
      'acme/call/c1',
    ];
    for (const c of cases) {
      const schema = ActorAddressSchema.safeParse(c);
      if (schema.success) expect(checkedAddress(c as never)).toEqual(schema.data);
      else expect(() => checkedAddress(c as never)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    }
  });

  it('memoises shards per shard count without mixing counts', () => {
    const a = { tenant: 'acme', kind: 'call' as const, id: 'memo' };
    const fresh = (n: number) => createHash('sha1').update(addressKey(a)).digest().readUInt32BE(0) % n;
    for (const n of [256, 7, 256, 7]) expect(shardOf(a, n)).toBe(fresh(n));
  });

  it('picks the same owners from remembered scores as from fresh hashes', () => {
    const fresh = (shard: number, nodes: string[]) => {
      const scored = nodes.map((n) => ({ n, s: createHash('sha1').update(`${shard}|${n}`).digest().readUInt32BE(0) }));
      scored.sort((x, y) => y.s - x.s || (x.n < y.n ? -1 : 1));
      return scored[0]?.n;
    };
    const sets = [['n1', 'n2', 'n3'], ['n2', 'n3'], ['n1', 'n2', 'n3', 'n4'], ['solo']];
    for (let pass = 0; pass < 2; pass++)
      for (const nodes of sets) for (let s = 0; s < 256; s++) expect(rendezvousOwner(s, nodes)).toBe(fresh(s, nodes));
  });
});
