import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';

describe('device PIN: policy, history, quick unlock, lockout, reset', () => {
  let node: TestNode;
  let adaId: string;

  beforeAll(async () => {
    node = await startTestNode();
    adaId = await createUser(node, 'acme', { username: 'ada', role: 'admin' });
  });
  afterAll(async () => node.destroy());

  /** A patient of its own per test, so no test depends on the PIN or lock another one left behind. */
  async function patient(username: string) {
    const id = await createUser(node, 'acme', { username, role: 'patient' });
    const token = await tokenFor(node, 'acme', username);
    const setPin = (newPin: string, as = token, userId?: string) =>
      node.http.post('/api/account/resetPin', {
        tenant: 'acme',
        token: as,
        body: { newPin, ...(userId ? { userId } : {}) },
      });
    const unlock = (pin: string) =>
      node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'pin', username, pin } });
    const principal = () => ({
      tenant: 'acme',
      userId: id,
      username,
      role: 'patient',
      permissions: new Set<never>(),
      scheme: 'internal' as const,
    });
    return { id, token, setPin, unlock, principal };
  }

  it('enforces the tenant PIN policy and history', async () => {
    const { id: patId, setPin, principal: patPrincipal } = await patient('pat');
    expect(await node.services.auth.account.hasPin(patPrincipal())).toBe(false);
    expect((await setPin('12')).body.code).toBe('pin_policy_violation');
    expect((await setPin('12ab')).body.code).toBe('pin_policy_violation');
    // Sequences and repeats are refused whatever the tenant policy (NIST SP 800-63B 5.1.1.2).
    for (const weak of ['123456', '1234', '4321', '0000', '111111', '7890', '2468', '1212', '123123']) {
      const r = await setPin(weak);
      expect({ weak, status: r.status, code: r.body.code, field: r.body.errors?.[0]?.field }).toEqual({
        weak,
        status: 422,
        code: 'pin_policy_violation',
        field: 'newPin',
      });
    }
    expect(await node.services.auth.account.hasPin(patPrincipal())).toBe(false);
    expect((await setPin('4927')).status).toBe(200);
    expect(await node.services.auth.account.hasPin(patPrincipal())).toBe(true);
    const reused = await setPin('4927');
    expect(reused.status).toBe(422);
    expect(reused.body.errors[0].field).toBe('newPin');
    expect((await setPin('8305')).status).toBe(200);
    expect((await setPin('4927')).status).toBe(422);
    const { db } = await node.services.tenants.require('acme');
    const stored = await db.models.User.findById(patId).lean();
    expect(stored!.pinHash).toMatch(/^scrypt\$/);
    expect(stored!.pinHash).not.toContain('8305');
  });

  it('unlocks with the PIN, locks after the maximum failures, and an admin reset clears the lock', async () => {
    const { id: patId, token: patToken, setPin, unlock } = await patient('pia');
    expect((await setPin('8305')).status).toBe(200);
    const ok = await unlock('8305');
    expect(ok.status).toBe(200);
    expect(ok.body.user.username).toBe('pia');
    const rules = await node.services.auth.account.securityRules('acme');
    for (let i = 1; i < rules.lockout.maxAttempts; i++)
      expect((await unlock('0000')).body.code).toBe('invalid_credentials');
    const locked = await unlock('0000');
    expect(locked.status).toBe(423);
    expect(locked.body.code).toBe('account_locked');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await unlock('8305')).body.code).toBe('account_locked');
    const audit = await node.services.auth.audit.list('acme', { action: 'signin.lockout', subjectId: patId });
    expect(audit).toHaveLength(1);
    const patDenied = await setPin('5183', patToken, adaId);
    expect(patDenied.status).toBe(403);
    const adminToken = await tokenFor(node, 'acme', 'ada');
    const reset = await setPin('6172', adminToken, patId);
    expect(reset.status).toBe(200);
    expect((await unlock('6172')).status).toBe(200);
    expect(await node.services.auth.audit.list('acme', { action: 'pin.reset', subjectId: patId })).toHaveLength(1);
  });

  it('refuses unknown users like wrong PINs', async () => {
    const r = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'pin', username: 'nobody', pin: '1234' },
    });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('invalid_credentials');
  });
});
