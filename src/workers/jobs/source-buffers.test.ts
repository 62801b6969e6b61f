import { describe, it, expect, jest, afterEach } from '@jest/globals';
import { SourceBuffers } from './source-buffers.js';

const MIB = 1024 * 1024;

describe('SourceBuffers (decision 1189)', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('gives whole MiB up to its bound, and the same memory again once handed back', () => {
    const pool = new SourceBuffers(8 * MIB, 2);
    const a = pool.take(300_000);
    expect(a.length).toBe(MIB);
    const b = pool.take(3 * MIB + 1);
    expect(b.length).toBe(4 * MIB);
    expect(b.buffer).not.toBe(a.buffer);
    pool.give(a.subarray(0, 300_000));
    expect(pool.kept).toBe(1);
    const again = pool.take(200_000);
    expect(again.buffer).toBe(a.buffer);
    expect(again.length).toBe(MIB);
    expect(pool.kept).toBe(0);
  });

  it('takes back only what it made, once, up to `keep`; a source past its bound gets memory of its own', () => {
    const pool = new SourceBuffers(2 * MIB, 1);
    pool.give(Buffer.alloc(10));
    pool.give(Buffer.allocUnsafeSlow(MIB));
    expect(pool.kept).toBe(0);
    const big = pool.take(3 * MIB);
    expect(big.length).toBe(3 * MIB);
    pool.give(big);
    expect(pool.kept).toBe(0);
    const [x, y] = [pool.take(10), pool.take(10)];
    pool.give(x);
    pool.give(x);
    pool.give(y);
    expect(pool.kept).toBe(1);
    // A larger need than the kept buffer holds: a new one, the kept one stays.
    expect(pool.take(MIB + 1).buffer).not.toBe(x.buffer);
    expect(pool.kept).toBe(1);
  });

  it('lets its free buffers go once no source was read for the idle time', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const pool = new SourceBuffers(8 * MIB, 4, 30_000);
    const a = pool.take(10);
    pool.give(a);
    jest.advanceTimersByTime(20_000);
    pool.give(pool.take(10)); // read 20 s in: the buffers stay 30 s from then
    jest.advanceTimersByTime(20_000);
    expect(pool.kept).toBe(1);
    jest.advanceTimersByTime(10_000);
    expect(pool.kept).toBe(0);
  });
});
