import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser } from '../../support/auth.js';

describe('sign-in rate limits', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode({ RATE_LIMIT_SIGNIN_PER_ACCOUNT: '3', RATE_LIMIT_SIGNIN_PER_IP: '6' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
  });
  afterAll(async () => node.destroy());

  const attempt = (username: string) =>
    node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'pin', username, pin: '0000' } });

  it('limits attempts per account, then per IP, with Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await attempt('pat')).status).toBe(401);
    const limited = await attempt('pat');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The IP counter has seen 4 attempts; 2 more are allowed, the 7th is refused whatever the account.
    expect((await attempt('someone')).status).toBe(401);
    expect((await attempt('someone-else')).status).toBe(401);
    expect((await attempt('a-third-one')).status).toBe(429);
  });
});
