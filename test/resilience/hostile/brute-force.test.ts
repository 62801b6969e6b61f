import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';

/** Lockouts and sign-in rate limits under concurrent bursts (Promise.all), not only sequential tries. */
describe('brute force under concurrency', () => {
  let node: TestNode;
  let maxAttempts: number;

  beforeAll(async () => {
    node = await startTestNode({ RATE_LIMIT_SIGNIN_PER_ACCOUNT: '1000', RATE_LIMIT_SIGNIN_PER_IP: '1000' });
    for (const u of ['pat', 'pia']) {
      await createUser(node, 'brute', { username: u, role: 'patient' });
      const token = await tokenFor(node, 'brute', u);
      expect(
        (await node.http.post('/api/account/resetPin', { tenant: 'brute', token, body: { newPin: '8305' } })).status,
      ).toBe(200);
    }
    maxAttempts = (await node.services.auth.account.securityRules('brute')).lockout.maxAttempts;
  });
  afterAll(async () => node?.destroy());

  const unlock = (username: string, pin: string, n = node) =>
    n.http.post('/api/account/login', { tenant: 'brute', body: { method: 'pin', username, pin } });

  it('a burst of wrong PINs locks the account; no more guesses than the policy allows are evaluated', async () => {
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => unlock('pat', String(1000 + i))));
    const codes = burst.map((r) => r.body.code);
    expect(burst.every((r) => [401, 423, 429].includes(r.status))).toBe(true);
    expect(codes).toContain('account_locked');
    expect(codes.filter((c) => c === 'invalid_credentials').length).toBeLessThan(maxAttempts);
    const right = await unlock('pat', '8305');
    expect(right.body.code).toBe('account_locked');
  });

  it('a burst holding the right PIN among wrong ones cannot slip past the lock', async () => {
    const pins = Array.from({ length: 30 }, (_, i) => (i === 20 ? '8305' : String(2000 + i)));
    const burst = await Promise.all(pins.map((p) => unlock('pia', p)));
    const evaluated = burst.filter((r) => r.body.code === 'invalid_credentials' || r.status === 200).length;
    expect(evaluated).toBeLessThanOrEqual(maxAttempts);
  });

  it('the per-account and per-IP sign-in limits hold under a burst', async () => {
    const limited = await startTestNode({ RATE_LIMIT_SIGNIN_PER_ACCOUNT: '4', RATE_LIMIT_SIGNIN_PER_IP: '10' });
    try {
      await createUser(limited, 'brute', { username: 'sol', role: 'patient' });
      const one = await Promise.all(Array.from({ length: 25 }, () => unlock('sol', '0000', limited)));
      expect(one.filter((r) => r.status !== 429).length).toBeLessThanOrEqual(4);
      expect(
        one
          .filter((r) => r.status === 429)
          .every((r) => r.body.code === 'rate_limited' && Number(r.headers['retry-after']) > 0),
      ).toBe(true);
      const many = await Promise.all(Array.from({ length: 25 }, (_, i) => unlock(`nobody${i}`, '0000', limited)));
      expect(many.filter((r) => r.status !== 429).length).toBeLessThanOrEqual(10 - 4);
      expect((await limited.http.get('/healthz')).status).toBe(200);
    } finally {
      await limited.destroy();
    }
  });
});
