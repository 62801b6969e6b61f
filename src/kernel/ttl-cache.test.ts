import { describe, it, expect } from '@jest/globals';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('answers until the entry is ttlMs old, then forgets it', () => {
    let t = 1000;
    const c = new TtlCache<string, number>({ ttlMs: 50, maxEntries: 10, now: () => t });
    c.set('a', 1);
    t += 49;
    expect(c.get('a')).toBe(1);
    t += 1;
    expect(c.get('a')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('keeps at most maxEntries, dropping the oldest first', () => {
    const c = new TtlCache<string, number>({ ttlMs: 1e9, maxEntries: 2 });
    c.set('a', 1);
    c.set('b', 2);
    c.set('a', 3); // rewritten: now the newest
    c.set('c', 4);
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([3, undefined, 4]);
  });

  it('deletes one key or every matching key', () => {
    const c = new TtlCache<string, number>({ ttlMs: 1e9, maxEntries: 10 });
    c.set('t1:a', 1);
    c.set('t1:b', 2);
    c.set('t2:a', 3);
    c.delete('t1:a');
    c.deleteWhere((k) => k.startsWith('t1:'));
    expect([c.get('t1:a'), c.get('t1:b'), c.get('t2:a')]).toEqual([undefined, undefined, 3]);
  });

  it('loads a missing or expired entry once and keeps it, falsy values included', async () => {
    let t = 0;
    const c = new TtlCache<string, number | null>({ ttlMs: 10, maxEntries: 10, now: () => t });
    let loads = 0;
    const load = async () => (++loads, null);
    expect(await c.getOrLoad('a', load)).toBeNull();
    expect(await c.getOrLoad('a', load)).toBeNull();
    expect(loads).toBe(1);
    t += 10;
    await c.getOrLoad('a', load);
    expect(loads).toBe(2);
  });
});
