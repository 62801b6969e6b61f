import { describe, expect, it } from '@jest/globals';
import { VerifiedSignatures } from './access-token-verifier.js';
import { AppError } from '../kernel/errors.js';

/** A verification that counts its calls and answers a payload expiring at `exp` (seconds). */
function counted(exp: number) {
  const calls: string[] = [];
  return {
    calls,
    verify: (token: string) => async () => {
      calls.push(token);
      return { sub: token, exp };
    },
  };
}

describe('checked signatures kept by token', () => {
  it('checks a token once, and another token anew', async () => {
    let now = 1_000_000;
    const cache = new VerifiedSignatures({ now: () => now });
    const v = counted(2_000);
    expect(await cache.check('a', v.verify('a'))).toEqual({ sub: 'a', exp: 2_000 });
    now += 1_000;
    expect(await cache.check('a', v.verify('a'))).toEqual({ sub: 'a', exp: 2_000 });
    await cache.check('b', v.verify('b'));
    expect(v.calls).toEqual(['a', 'b']);
  });

  it('checks again at the token expiry, and passes the refusal on', async () => {
    let now = 1_000_000;
    const cache = new VerifiedSignatures({ now: () => now });
    const v = counted(1_010);
    await cache.check('a', v.verify('a'));
    now = 1_009_999;
    await cache.check('a', v.verify('a'));
    expect(v.calls).toHaveLength(1);
    now = 1_010_000;
    const expired = () => Promise.reject(new AppError('token_expired', 'The access token has expired'));
    await expect(cache.check('a', expired)).rejects.toMatchObject({ code: 'token_expired' });
    // A refusal is never kept: the next check runs again.
    await expect(cache.check('a', expired)).rejects.toMatchObject({ code: 'token_expired' });
    expect(cache.size).toBe(0);
  });

  it('keeps an entry no longer than its time to live, and no more entries than its bound', async () => {
    let now = 1_000_000;
    const cache = new VerifiedSignatures({ now: () => now, ttlMs: 30_000, max: 2 });
    const v = counted(9_999);
    await cache.check('a', v.verify('a'));
    now += 29_999;
    await cache.check('a', v.verify('a'));
    now += 1;
    await cache.check('a', v.verify('a'));
    expect(v.calls).toEqual(['a', 'a']);
    await cache.check('b', v.verify('b'));
    await cache.check('c', v.verify('c'));
    expect(cache.size).toBe(2);
    await cache.check('a', v.verify('a')); // the oldest went first
    await cache.check('c', v.verify('c'));
    expect(v.calls).toEqual(['a', 'a', 'b', 'c', 'a']);
  });

  it('keeps nothing with a bound of 0, nor a payload without an expiry', async () => {
    const off = new VerifiedSignatures({ max: 0 });
    const v = counted(Math.floor(Date.now() / 1000) + 60);
    await off.check('a', v.verify('a'));
    await off.check('a', v.verify('a'));
    expect(v.calls).toEqual(['a', 'a']);
    const cache = new VerifiedSignatures();
    const noExp = async () => ({ sub: 'x' });
    await cache.check('x', noExp);
    expect(cache.size).toBe(0);
  });
});
