import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import type { PinLockedPush, SecurityAlertPush } from '../../../src/contracts/pushes.js';
import { PinAttemptsStore } from '../../../src/data/stores/pin-attempts.store.js';
import { decoyHash } from '../../../src/kernel/secrets.js';

/**
 * PIN guessing from outside clients behind a configured proxy (TRUST_PROXY=loopback), so each
 * X-Forwarded-For is one client address: progressive per-address locks, a daily budget that ends in a
 * hard lock, lockouts that do not shut the user out from her own device, audit and push on lockout, and
 * unknown or PIN-less accounts that cannot be told from real ones.
 */
describe('PIN lockout', () => {
  let node: TestNode;
  let adminToken: string;
  let patId: string;
  const sockets: HubClient[] = [];

  const setRules = async (tenant: string, lockout: Record<string, number>) => {
    const { db } = await node.services.tenants.require(tenant);
    await db.models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'security.lockout': lockout } });
  };
  const setPin = async (tenant: string, username: string, pin: string) => {
    const token = await tokenFor(node, tenant, username);
    expect((await node.http.post('/api/account/resetPin', { tenant, token, body: { newPin: pin } })).status).toBe(200);
  };

  beforeAll(async () => {
    node = await startTestNode({
      ROLES: 'http,hub,actors',
      TRUST_PROXY: 'loopback',
      RATE_LIMIT_SIGNIN_PER_IP: '100000',
      RATE_LIMIT_SIGNIN_PER_ACCOUNT: '100000',
    });
    // The rules are written before anything reads (and caches) them.
    patId = await createUser(node, 'pins', { username: 'pat', role: 'patient' });
    await createUser(node, 'pins', { username: 'nopin', role: 'patient' });
    await createUser(node, 'pins', { username: 'ada', role: 'admin' });
    await setRules('pins', { maxAttempts: 2, lockoutSeconds: 30, maxLockoutSeconds: 3600, maxFailuresPerDay: 6 });
    await setPin('pins', 'pat', '8305');
    adminToken = await tokenFor(node, 'pins', 'ada');
    await createUser(node, 'timing', { username: 'tia', role: 'patient' });
    await createUser(node, 'timing', { username: 'tim', role: 'patient' });
    await setRules('timing', { maxAttempts: 1000, lockoutSeconds: 1, maxLockoutSeconds: 1, maxFailuresPerDay: 1000 });
    await setPin('timing', 'tia', '8305');
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await node.destroy();
  });

  const unlock = (from: string, username: string, pin: string, tenant = 'pins') =>
    node.http.post('/api/account/login', {
      tenant,
      headers: { 'x-forwarded-for': from },
      body: { method: 'pin', username, pin },
    });
  const attacker = '203.0.113.9';
  const own = '198.51.100.7';
  /**
   * Time passes for the attacker's locks: each source lock of the account ends now, as if its seconds had
   * run out (the locks are long, so no test step outlives one on a slow machine; the test does not sleep).
   */
  const locksRunOut = async (tenant: string, username: string) => {
    const { sources } = node.infra.keys.pinGuard(tenant, username);
    const fields = await node.infra.redis.hkeys(sources);
    const ends = fields.filter((f) => f.endsWith('|untilMs'));
    expect(ends.length).toBeGreaterThan(0);
    for (const f of ends) await node.infra.redis.hset(sources, f, '0');
  };

  it('locks an address progressively, never the user on her own device, then hard-locks the account at the day budget', async () => {
    const socket = await connect(node.url!, 'pins', { token: await tokenFor(node, 'pins', 'pat') });
    sockets.push(socket);
    const pushes: PinLockedPush[] = [];
    let wake = () => undefined as void;
    socket.on('pinLocked', (p) => {
      pushes.push(p);
      wake();
    });
    const pushed = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (pushes.length >= n ? resolve() : void (wake = check));
        check();
      });

    expect((await unlock(attacker, 'pat', '0000')).body.code).toBe('invalid_credentials');
    const first = await unlock(attacker, 'pat', '0001');
    expect(first.status).toBe(423);
    expect(first.headers['retry-after']).toBe('30');
    expect((await unlock(attacker, 'pat', '8305')).body.code).toBe('account_locked');
    // The attacker's lock is the attacker's: pat still unlocks from her device.
    expect((await unlock(own, 'pat', '8305')).status).toBe(200);

    await locksRunOut('pins', 'pat');
    expect((await unlock(attacker, 'pat', '0002')).body.code).toBe('invalid_credentials');
    const second = await unlock(attacker, 'pat', '0003');
    expect(second.status).toBe(423);
    expect(second.headers['retry-after']).toBe('60');

    // 4 failures so far; the 6th of the day, from any address, locks PIN sign-in for the account.
    await locksRunOut('pins', 'pat');
    expect((await unlock(attacker, 'pat', '0004')).body.code).toBe('invalid_credentials');
    const adminSocket = await connect(node.url!, 'pins', { token: adminToken });
    sockets.push(adminSocket);
    const alerted = new Promise<SecurityAlertPush>((resolve) => adminSocket.once('securityAlert', resolve));
    const hard = await unlock('192.0.2.44', 'pat', '0005');
    expect(hard.status).toBe(423);
    // The hard lock says how long it lasts and which ways in still work.
    expect(Number(hard.headers['retry-after'])).toBeGreaterThan(24 * 3600);
    expect(hard.body.detail).toMatch(/single sign-on/i);
    expect(hard.body.detail).toMatch(/QR/);
    const again = await unlock(own, 'pat', '8305');
    expect(again.body.code).toBe('account_locked');
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(24 * 3600);
    expect((await unlock('192.0.2.45', 'pat', '8305')).body.code).toBe('account_locked');
    // An administrator is alerted at once (hub push to every user who may reset PINs).
    expect(await alerted).toMatchObject({ kind: 'pinLocked', userId: patId, username: 'pat' });
    // The owner's way back, which no PIN guess can block: a QR login approved from her signed-in session,
    // then a new PIN set from it.
    const web = await tokenFor(node, 'pins', 'pat');
    const code = (await node.http.get('/api/account/qrCode?deviceName=phone', { tenant: 'pins' })).body;
    expect(
      (await node.http.post('/api/account/approveLoginCode', { tenant: 'pins', token: web, body: { code: code.code } }))
        .status,
    ).toBe(200);
    const viaQr = await node.http.post('/api/account/login', {
      tenant: 'pins',
      body: { method: 'qr', code: code.code, pollSecret: code.pollSecret },
    });
    expect(viaQr.status).toBe(200);
    expect(
      (
        await node.http.post('/api/account/resetPin', {
          tenant: 'pins',
          token: viaQr.body.accessToken,
          body: { newPin: '3907' },
        })
      ).status,
    ).toBe(200);
    expect((await unlock(own, 'pat', '3907')).status).toBe(200);

    const lockouts = await node.services.auth.audit.list('pins', { action: 'signin.lockout', subjectId: patId });
    expect(lockouts.map((e) => [e.ip, (e.details as { scope: string }).scope]).sort()).toEqual([
      ['192.0.2.44', 'account'],
      [attacker, 'source'],
      [attacker, 'source'],
    ]);
    await pushed(3);
    expect(pushes.map((p) => [p.scope, p.scope === 'account' ? p.retryAfter! > 24 * 3600 : p.retryAfter])).toEqual([
      ['source', 30],
      ['source', 60],
      ['account', true],
    ]);

    // An administrator's reset ends the hard lock.
    expect(
      (
        await node.http.post('/api/account/resetPin', {
          tenant: 'pins',
          token: adminToken,
          body: { userId: patId, newPin: '6172' },
        })
      ).status,
    ).toBe(200);
    expect((await unlock(own, 'pat', '6172')).status).toBe(200);
  });

  it('unknown users and users without a PIN lock out exactly like a real account', async () => {
    for (const username of ['nobody', 'nopin']) {
      const from = username === 'nobody' ? '203.0.113.50' : '203.0.113.51';
      expect((await unlock(from, username, '0000')).body.code).toBe('invalid_credentials');
      const locked = await unlock(from, username, '0001');
      expect(locked.status).toBe(423);
      expect(locked.headers['retry-after']).toBe('30');
    }
  });

  it('a lock lasts its whole time, not until the next whole second of the clock', async () => {
    const attempts = new PinAttemptsStore({ redis: node.infra.redis, keys: node.infra.keys });
    const rules = { maxAttempts: 1, lockoutSeconds: 1, maxLockoutSeconds: 1, maxFailuresPerDay: 100 };
    const redisMs = async () => {
      const [s, us] = await node.infra.redis.time();
      return Number(s) * 1000 + Math.floor(Number(us) / 1000);
    };
    const reserved = await attempts.reserve('pins', 'clock-check', 'clock', rules);
    expect(reserved.kind).toBe('ok');
    if (reserved.kind !== 'ok') return;
    // Redis's clock read before and after the lock is set brackets the moment it was set: the lock must
    // end exactly its length after that moment, to the millisecond (a lock kept in whole seconds ends at
    // a second's boundary instead). The bracket holds however slow the machine is (decision 1050).
    const before = await redisMs();
    expect(await attempts.fail('pins', 'clock-check', 'clock', reserved, rules)).toMatchObject({
      kind: 'locked',
      retryAfter: 1,
    });
    const after = await redisMs();
    const k = node.infra.keys.pinGuard('pins', 'clock-check');
    const untilMs = Number(await node.infra.redis.hget(k.sources, 'clock|untilMs'));
    expect({
      fromLock: untilMs >= before + 1000 && untilMs <= after + 1000,
      wholeSeconds: await node.infra.redis.hexists(k.sources, 'clock|until'),
    }).toEqual({ fromLock: true, wholeSeconds: 0 });
    // The stored end is what a guess is refused against, in milliseconds: an end half a second into an
    // hour ahead is refused with the hour and a second still to wait, whatever second of the clock it is.
    await node.infra.redis.hset(k.sources, 'clock|untilMs', String(after + 3_600_500));
    const again = await attempts.reserve('pins', 'clock-check', 'clock', rules);
    const at = await redisMs();
    expect(again.kind).toBe('locked');
    if (again.kind !== 'locked') return;
    expect(again.retryAfter).toBeGreaterThanOrEqual(Math.ceil((after + 3_600_500 - at) / 1000));
    expect(again.retryAfter).toBeLessThanOrEqual(Math.ceil((after + 3_600_500 - after) / 1000));
  });

  it('runs the same scrypt check for unknown users and users without a PIN as for a wrong PIN', async () => {
    // The work, not its time (decision 1050): one scrypt per guess whichever the account, counted by the
    // node, against a decoy hash of the same cost as a stored PIN's, so no answer and no timing differs.
    const checks = async () => {
      const m = await node.infra.metrics.registry.getSingleMetric('pin_checks_total')?.get();
      return m?.values.reduce((n, v) => n + v.value, 0) ?? 0;
    };
    const users = { wrong: 'tia', unknown: 'nobody-here', nopin: 'tim' } as const;
    const ran: Record<string, number> = {};
    for (const kind of ['wrong', 'unknown', 'nopin'] as const) {
      const before = await checks();
      const r = await unlock('203.0.113.60', users[kind], '0000', 'timing');
      expect(r.body.code).toBe('invalid_credentials');
      ran[kind] = (await checks()) - before;
    }
    expect(ran).toEqual({ wrong: 1, unknown: 1, nopin: 1 });
    const { db } = await node.services.tenants.require('timing');
    const stored = (await db.models.User.findOne({ username: 'tia' }).lean()) as { pinHash?: string } | null;
    const cost = (h: string) => {
      const [kind, n, r, p, , key] = h.split('$');
      return { kind, n, r, p, keyBytes: Buffer.from(key!, 'base64url').length };
    };
    expect(cost(await decoyHash())).toEqual(cost(stored!.pinHash!));
  });
});
