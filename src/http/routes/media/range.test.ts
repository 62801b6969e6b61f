import { describe, it, expect } from '@jest/globals';
import { etagMatches, resolveRange } from './range.js';
import { contentDisposition } from './download.js';

describe('resolveRange', () => {
  it('resolves the three single-range forms against the size', () => {
    expect(resolveRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(resolveRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(resolveRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(resolveRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(resolveRange('bytes=50-5000', 100)).toEqual({ start: 50, end: 99 });
  });

  it('answers unsatisfiable ranges', () => {
    expect(resolveRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(resolveRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(resolveRange('bytes=0-', 0)).toBe('unsatisfiable');
  });

  it('ignores what it does not serve: absent, malformed, reversed or multiple ranges', () => {
    for (const h of [undefined, '', 'bytes=', 'bytes=-', 'items=0-1', 'bytes=5-1', 'bytes=0-1,5-6', 'bytes=a-b']) {
      expect(resolveRange(h, 100)).toBeUndefined();
    }
  });
});

describe('etagMatches', () => {
  it('compares weakly across a list and honours *', () => {
    expect(etagMatches('"abc"', 'abc')).toBe(true);
    expect(etagMatches('W/"abc"', 'abc')).toBe(true);
    expect(etagMatches('"x", "abc"', 'abc')).toBe(true);
    expect(etagMatches('*', 'abc')).toBe(true);
    expect(etagMatches('"abcd"', 'abc')).toBe(false);
    expect(etagMatches(undefined, 'abc')).toBe(false);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name without header injection', () => {
    expect(contentDisposition('inline', 'Röntgen "1".png')).toBe(
      `inline; filename="R_ntgen _1_.png"; filename*=UTF-8''R%C3%B6ntgen%20%221%22.png`,
    );
    expect(contentDisposition('attachment', 'a\r\nSet-Cookie: x')).not.toMatch(/\r|\n/);
  });
});
