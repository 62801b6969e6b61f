import { beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { TenantConfigRepository } from '../../data/repositories/tenant-config.repository.js';
import { TenantSettingsService } from './tenant-settings.service.js';
import { SecurityRulesPatch } from './tenant-settings.schema.js';
import { defaultSettings } from '../../data/tenant-defaults.js';
import {
  fakeDirectoryServices,
  type FakeDirectoryServices,
} from '../../../test/support/fakes/directory.fake-services.js';
import { principalOf } from '../../../test/support/fakes/principals.js';

/**
 * Tenant administrators' security rules (decision 950) on in-memory fakes: the bounds that span fields,
 * the compare-and-set that keeps them when two administrators change the two ends at once, the audit
 * entry of each change and the caches dropped at once.
 */
const T = 'clinic';
let s: FakeDirectoryServices;
let admin: Principal;

beforeEach(async () => {
  s = fakeDirectoryServices();
  s.mongo.provision(T);
  const id = await s.repos.credentials(T).create({ username: 'root', displayName: 'Root Admin', role: 'admin' });
  admin = principalOf(T, { _id: new Types.ObjectId(id), username: 'root', role: 'admin' });
});

const storedPin = async () => (await s.repos.settings(T).settings())?.security?.pin;

/** A settings repository in which a rival administrator's write lands between this service's read and write. */
function withRival(
  rival: (repo: Pick<TenantConfigRepository, 'settings' | 'setPaths'>) => Promise<unknown>,
  times = 1,
): TenantSettingsService {
  let left = times;
  return new TenantSettingsService({
    settings: (t) => {
      const repo = s.repos.settings(t);
      return {
        settings: () => repo.settings(),
        setPaths: async (set, ifRevision) => {
          if (ifRevision !== undefined && left-- > 0) await rival(repo);
          return repo.setPaths(set, ifRevision);
        },
      };
    },
    admin: s.admin,
    rules: s.rules,
    caches: [s.admin, s.rules],
    audit: s.audit,
  });
}

describe('the bounds of a change', () => {
  it('each field within its range (the schema): a 3-digit PIN or a 2-hour access token is refused', () => {
    expect(SecurityRulesPatch.safeParse({ pin: { minLength: 3 } }).success).toBe(false);
    expect(SecurityRulesPatch.safeParse({ session: { accessTokenTtlSeconds: 7200 } }).success).toBe(false);
    expect(SecurityRulesPatch.safeParse({ pin: { colour: 'red' } }).success).toBe(false);
    expect(SecurityRulesPatch.safeParse({ pin: { minLength: 6 } }).success).toBe(true);
  });

  it.each([
    [{ pin: { minLength: 10 } }, 'pin.minLength'],
    [{ lockout: { lockoutSeconds: 7200 } }, 'lockout.lockoutSeconds'],
    [{ session: { refreshTokenTtlSeconds: 300, accessTokenTtlSeconds: 600 } }, 'session.accessTokenTtlSeconds'],
  ])('a change that crosses the other end of its bound is refused: %j', async (patch, field) => {
    await expect(s.tenantSettings.changeSecurityRules(admin, T, patch)).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field })],
    });
    expect((await s.repos.settings(T).settings())?.security).toEqual(defaultSettings(T).security);
    expect(await s.audit.list(T, { action: 'security.rules.change' })).toEqual([]);
  });

  it('moving both ends together is one valid change, applied at once, audited with old and new values', async () => {
    expect((await s.rules.get(T)).pin.maxLength).toBe(8);
    const rules = await s.tenantSettings.changeSecurityRules(admin, T, { pin: { minLength: 10, maxLength: 12 } });
    expect(rules.pin).toMatchObject({ minLength: 10, maxLength: 12 });
    const [entry] = await s.audit.list(T, { action: 'security.rules.change' });
    expect(entry?.details).toEqual({
      paths: ['security.pin.minLength', 'security.pin.maxLength'],
      changes: [
        { path: 'security.pin.minLength', old: 4, new: 10 },
        { path: 'security.pin.maxLength', old: 8, new: 12 },
      ],
    });
    expect(entry?.actorId).toBe(admin.userId);
  });

  it('a change to the value already in effect writes no audit entry', async () => {
    await s.tenantSettings.changeSecurityRules(admin, T, { pin: { minLength: 4 } });
    expect(await s.audit.list(T, { action: 'security.rules.change' })).toEqual([]);
  });
});

describe('compare-and-set on the settings revision', () => {
  it('two administrators move the two ends at once: the later one is checked against the earlier and refused', async () => {
    const service = withRival((repo) => repo.setPaths({ 'security.pin.maxLength': 6 }));
    await expect(service.changeSecurityRules(admin, T, { pin: { minLength: 8 } })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect(await storedPin()).toMatchObject({ minLength: 4, maxLength: 6 });
  });

  it('a rival write that keeps the bound: the change is checked again and applied over it', async () => {
    const service = withRival((repo) => repo.setPaths({ 'security.pin.maxLength': 10 }));
    const rules = await service.changeSecurityRules(admin, T, { pin: { minLength: 7 } });
    expect(rules.pin).toMatchObject({ minLength: 7, maxLength: 10 });
    expect((await s.repos.settings(T).settings())?.rev).toBe(2);
  });

  it('a document that keeps changing under every attempt ends in a coded conflict, never a broken pair', async () => {
    let n = 0;
    const service = withRival((repo) => repo.setPaths({ 'security.loginCodeTtlSeconds': 60 + n++ }), 5);
    await expect(service.changeSecurityRules(admin, T, { pin: { minLength: 6 } })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(await storedPin()).toMatchObject({ minLength: 4, maxLength: 8 });
  });

  it('a tenant without its settings document is tenant_not_found', async () => {
    await expect(
      s.tenantSettings.changeSecurityRules(admin, 'unprovisioned', { pin: { minLength: 5 } }),
    ).rejects.toMatchObject({ code: 'tenant_not_found' });
  });
});

describe('the rules in effect', () => {
  it('are the stored rules over the defaults, and a change is read back at once on this node', async () => {
    expect((await s.rules.get(T)).lockout.maxFailuresPerDay).toBe(20);
    await s.tenantSettings.changeSecurityRules(admin, T, { lockout: { maxFailuresPerDay: 7 } });
    expect((await s.rules.get(T)).lockout.maxFailuresPerDay).toBe(7);
  });

  it('a tenant stored before a rule existed reads its default', async () => {
    const cfg = s.mongo.tenantDb(T).collection('TenantConfig');
    cfg.update(cfg.byId('tenant')!, (d) => {
      delete (d.security as { lockout: Record<string, unknown> }).lockout.maxLockoutSeconds;
    });
    s.rules.forget(T);
    expect((await s.rules.get(T)).lockout.maxLockoutSeconds).toBe(3600);
  });
});
