import { describe, expect, it } from '@jest/globals';
import { addressKey, parseAddressKey, rendezvousOwner, shardOf } from './placement.js';

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
});
