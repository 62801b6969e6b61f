import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';

describe('device PIN: policy, history, quick unlock, lockout, reset', () => {
  let node: TestNode;
  let patToken: string;
  let patId: string;
  let adaId: string;

  beforeAll(async () => {
    node = await startTestNode();
    patId = await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    adaId = await createUser(node, 'acme', { username: 'ada', role: 'admin' });
    patToken = await tokenFor(node, 'acme', 'pat');
  });
  afterAll(async () => node.destroy());

  const setPin = (newPin: string, token = patToken, userId?: string) => node.http.post('/api/account/resetPin', { tenant: 'acme', token, body: { newPin, ...(userId ? { userId } : {}) } });
  const patPrincipal = () => ({ tenant: 'acme', userId: patId, username: 'pat', role: 'patient', permissions: new Set<never>(), scheme: 'internal' as const });
  const unlock = (pin: string) => node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'pin', username: 'pat', pin } });

  it('enforces the tenant PIN policy and history', async () => {
    expect(await node.services.auth.account.hasPin(patPrincipal())).toBe(false);
    expect((await setPin('12')).body.code).toBe('pin_policy_violation');
    expect((await setPin('12ab')).body.code).toBe('pin_policy_violation');
    expect((await setPin('1234')).status).toBe(200);
    expect(await node.services.auth.account.hasPin(patPrincipal())).toBe(true);
    const reused = await setPin('1234');
    expect(reused.status).toBe(422);
    expect(reused.body.errors[0].field).toBe('newPin');
    expect((await setPin('4321')).status).toBe(200);
    expect((await setPin('1234')).status).toBe(422);
    const { db } = await node.services.tenants.require('acme');
    const stored = await db.models.User.findById(patId).lean();
    expect(stored!.pinHash).toMatch(/^scrypt\$/);
    expect(stored!.pinHash).not.toContain('4321');
  });

  it('unlocks with the PIN, locks after the maximum failures, and an admin reset clears the lock', async () => {
    const ok = await unlock('4321');
    expect(ok.status).toBe(200);
    expect(ok.body.user.username).toBe('pat');
    const rules = await node.services.auth.account.securityRules('acme');
    for (let i = 1; i < rules.lockout.maxAttempts; i++) expect((await unlock('0000')).body.code).toBe('invalid_credentials');
    const locked = await unlock('0000');
    expect(locked.status).toBe(423);
    expect(locked.body.code).toBe('account_locked');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await unlock('4321')).body.code).toBe('account_locked');
    const audit = await node.services.auth.audit.list('acme', { action: 'signin.lockout' });
    expect(audit).toHaveLength(1);
    const patDenied = await setPin('5555', patToken, adaId);
    expect(patDenied.status).toBe(403);
    const adminToken = await tokenFor(node, 'acme', 'ada');
    const reset = await setPin('8642', adminToken, patId);
    expect(reset.status).toBe(200);
    expect((await unlock('8642')).status).toBe(200);
    expect((await node.services.auth.audit.list('acme', { action: 'pin.reset' }))).toHaveLength(1);
  });

  it('refuses unknown users like wrong PINs', async () => {
    const r = await node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'pin', username: 'nobody', pin: '1234' } });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('invalid_credentials');
  });
});
