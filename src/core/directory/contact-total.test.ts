import { describe, it, expect } from '@jest/globals';
import { pageTotal } from './contact.service.js';

describe('pageTotal', () => {
  const page = (skip: number, take = 20) => ({ skip, take });

  it('is exact on the last page, whatever was counted', () => {
    expect(pageTotal(page(0), 0, 7)).toBe(0);
    expect(pageTotal(page(0), 5, 99)).toBe(5);
    expect(pageTotal(page(40), 3, 10)).toBe(43);
  });

  it('takes the count on a full page, but never less than the page proves', () => {
    expect(pageTotal(page(0), 20, 57)).toBe(57);
    expect(pageTotal(page(40), 20, 45)).toBe(60);
  });

  it('never claims more than skip when a later page came back empty', () => {
    expect(pageTotal(page(100), 0, 57)).toBe(57);
    expect(pageTotal(page(100), 0, 140)).toBe(100);
  });
});
