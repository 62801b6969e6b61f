import { beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import { BUILTIN_ROLES } from '../../kernel/permissions.js';
import { fakeAuthServices, type FakeAuthServices } from '../../../test/support/fakes/auth.fake-services.js';
import { principalOf } from '../../../test/support/fakes/principals.js';

/**
 * PIN rules on in-memory fakes (docs/decisions/131): the tenant's PIN policy and history, who may set
 * whose PIN, and quick unlock's progressive locks per address and the account's daily budget, with the
 * clock of the attempts store moved by hand instead of waited for.
 */
const T = 'clinic';
let auth: FakeAuthServices;
let nurse: Principal;
let admin: Principal;

async function account(username: string, role: string): Promise<Principal> {
  const id = await auth.repos.credentials(T).create({ username, displayName: username, role });
  return principalOf(T, { _id: new Types.ObjectId(id), username, role });
}

const HOME = { ip: '203.0.113.7' };
const WARD = { ip: '198.51.100.20' };
const unlock = (pin: string, ctx = HOME, username = 'nurse') => auth.pins.unlock(T, { username, pin }, ctx);

beforeEach(async () => {
  auth = fakeAuthServices();
  auth.mongo.provision(T);
  // Small budgets keep the scrypt checks few: 2 guesses per address, 5 a day.
  await auth.repos.settings(T).setPaths({
    'security.lockout.maxAttempts': 2,
    'security.lockout.lockoutSeconds': 60,
    'security.lockout.maxLockoutSeconds': 100,
    'security.lockout.maxFailuresPerDay': 5,
  });
  nurse = await account('nurse', 'clinician');
  admin = await account('admin', 'admin');
});

describe('setting a PIN', () => {
  it.each([
    ['12', 'must be 4 to 8 characters'],
    ['12a4', 'must contain digits only'],
    ['1234', 'must not be a sequence'],
    ['7777', 'must not repeat one character'],
    ['1212', 'must not repeat a block'],
  ])('refuses %s by the tenant policy (%s)', async (newPin, problem) => {
    await expect(auth.pins.reset(nurse, { newPin })).rejects.toMatchObject({
      code: 'pin_policy_violation',
      errors: [{ field: 'newPin', message: problem }],
    });
    expect(await auth.pins.hasPin(T, nurse.userId)).toBe(false);
  });

  it('refuses one of the last historyCount PINs, and audits each set', async () => {
    await auth.repos.settings(T).setPaths({ 'security.pin.historyCount': 1 });
    auth.rules.forget(T);
    await auth.pins.reset(nurse, { newPin: '2580' });
    await expect(auth.pins.reset(nurse, { newPin: '2580' })).rejects.toMatchObject({
      code: 'pin_policy_violation',
      errors: [{ field: 'newPin', message: 'recently used' }],
    });
    expect(await auth.audit.list(T, { action: 'pin.set' })).toHaveLength(1);
  });

  it("another user's PIN: only with users:manage, never while impersonating", async () => {
    await auth.pins.reset(nurse, { newPin: '2580' });
    const colleague = await account('colleague', 'clinician');
    await expect(auth.pins.reset(colleague, { userId: nurse.userId })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(
      auth.pins.reset({ ...admin, actorUserId: colleague.userId }, { userId: nurse.userId }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    expect(await auth.pins.reset(admin, { userId: nurse.userId })).toEqual({ userId: nurse.userId, hasPin: false });
    expect(await auth.pins.hasPin(T, nurse.userId)).toBe(false);
    expect(await auth.audit.list(T, { action: 'pin.reset', subjectId: nurse.userId })).toHaveLength(1);
  });
});

describe('quick unlock', () => {
  beforeEach(async () => {
    await auth.pins.reset(nurse, { newPin: '2580' });
  });

  it('the right PIN signs in with the role permissions; a wrong one is invalid_credentials, audited', async () => {
    const s = await unlock('2580');
    expect((await auth.tokens.verify(s.accessToken)).perms).toEqual([...BUILTIN_ROLES.clinician!.permissions].sort());
    await expect(unlock('9999')).rejects.toMatchObject({ code: 'invalid_credentials' });
    const [failure] = await auth.audit.list(T, { action: 'signin.failure' });
    expect(failure?.details).toMatchObject({ method: 'pin', reason: 'wrong_pin' });
  });

  it('locks an address after maxAttempts failures, for lockoutSeconds, doubling up to the cap; other addresses still sign in', async () => {
    await expect(unlock('0000')).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(unlock('0001')).rejects.toMatchObject({ code: 'account_locked', retryAfter: 60 });
    await expect(unlock('2580')).rejects.toMatchObject({ code: 'account_locked', retryAfter: 60 });
    expect((await unlock('2580', WARD)).user.username).toBe('nurse');
    expect(auth.pushed.locked).toEqual([
      { tenant: T, userId: nurse.userId, push: expect.objectContaining({ scope: 'source', retryAfter: 60 }) },
    ]);
    auth.clock.advance(60);
    await expect(unlock('0002')).rejects.toMatchObject({ code: 'invalid_credentials' });
    // The second lock of the day: twice as long, capped at maxLockoutSeconds.
    await expect(unlock('0003')).rejects.toMatchObject({ code: 'account_locked', retryAfter: 100 });
  });

  it("spending the day's budget from several addresses hard-locks the account everywhere and alerts the administrators once", async () => {
    await auth.repos.settings(T).setPaths({ 'security.lockout.maxFailuresPerDay': 3 });
    auth.rules.forget(T);
    const from = (i: number) => ({ ip: `192.0.2.${i}` });
    for (let i = 0; i < 2; i++)
      await expect(unlock('0000', from(i))).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(unlock('0000', from(9))).rejects.toMatchObject({ code: 'account_locked' });
    await expect(unlock('2580', from(10))).rejects.toMatchObject({ code: 'account_locked' });
    expect(auth.pushed.alerts).toEqual([
      { tenant: T, push: expect.objectContaining({ kind: 'pinLocked', userId: nurse.userId, failuresToday: 3 }) },
    ]);
    expect(await auth.audit.list(T, { action: 'signin.lockout' })).toHaveLength(1);
    // Setting a new PIN (after an SSO sign-in) ends the lock.
    await auth.pins.reset(nurse, { newPin: '3691' });
    expect((await unlock('3691', from(11))).user.username).toBe('nurse');
  });

  it('an unknown username is refused and locked like a real one, but alerts no one', async () => {
    await expect(unlock('0000', HOME, 'ghost')).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(unlock('0000', HOME, 'ghost')).rejects.toMatchObject({ code: 'account_locked' });
    expect(auth.pushed.locked).toEqual([]);
    const [failure] = await auth.audit.list(T, { action: 'signin.failure' });
    expect(failure?.details).toMatchObject({ reason: 'unknown_user' });
  });

  it('a PIN of one tenant does not sign in on another', async () => {
    auth.mongo.provision('other');
    await expect(auth.pins.unlock('other', { username: 'nurse', pin: '2580' }, HOME)).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
  });
});
