import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toAppError } from '../../../src/kernel/errors.js';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { defaultSettings } from '../../../src/data/tenant-defaults.js';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/**
 * The tenant Settings and roles contract (src/data/repositories/tenant-config.repository.ts,
 * role.repository.ts) on the in-memory fakes and the real repositories: the compare-and-set on `rev`.
 */
describe.each(CONTRACT_SIDES)('settings and roles on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'settings';
  const r = () => side.repos(T);

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
  });
  afterAll(async () => side.close());

  it('a new tenant has the default settings and no revision yet; an unprovisioned one has none', async () => {
    const s = await r().settings.settings();
    expect(s).toMatchObject({
      _id: 'tenant',
      security: defaultSettings(T).security,
      features: defaultSettings(T).features,
    });
    expect(s?.rev ?? null).toBeNull();
    expect(await side.repos('nowhere').settings.settings()).toBeNull();
    expect(await side.repos('nowhere').settings.setPaths({ locale: 'de' })).toBeNull();
  });

  it('sets only the given paths, answers the document before, and moves the revision on each write', async () => {
    const before = await r().settings.setPaths({ 'security.pin.minLength': 6, locale: 'de' });
    expect(before?.security?.pin?.minLength).toBe(4);
    const now = await r().settings.settings();
    expect(now).toMatchObject({ locale: 'de', rev: 1 });
    expect(now?.security?.pin).toEqual({ ...defaultSettings(T).security.pin, minLength: 6 });
  });

  it('compare-and-set: applies only at the revision read, else answers null and changes nothing', async () => {
    const rev = (await r().settings.settings())?.rev ?? null;
    expect(await r().settings.setPaths({ 'security.pin.maxLength': 10 }, rev === null ? 5 : rev + 1)).toBeNull();
    expect(await r().settings.setPaths({ 'security.pin.maxLength': 10 }, null)).toBeNull();
    expect(await r().settings.setPaths({ 'security.pin.maxLength': 10 }, rev)).not.toBeNull();
    expect(await r().settings.setPaths({ 'security.pin.maxLength': 12 }, rev)).toBeNull();
    expect((await r().settings.settings())?.security?.pin?.maxLength).toBe(10);
  });

  it('null revision means "none yet": the first conditional write of a fresh tenant applies once', async () => {
    await side.provision('fresh');
    const fresh = side.repos('fresh').settings;
    expect(await fresh.setPaths({ timezone: 'Europe/Berlin' }, null)).not.toBeNull();
    expect(await fresh.setPaths({ timezone: 'Europe/Paris' }, null)).toBeNull();
    expect((await fresh.settings())?.timezone).toBe('Europe/Berlin');
  });

  it('a value outside the schema (an enum) is refused as a coded validation failure', async () => {
    const err = await r()
      .settings.setPaths({ 'directory.patientScope': 'everyone' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(toAppError(err).code).toBe('validation_failed');
    expect((await r().settings.settings())?.directory?.patientScope).toBe('careTeam');
  });

  it('roles: the built-in ones by name, sorted; a stored role; a duplicate name is a coded conflict', async () => {
    expect((await r().roles.findByName('patient'))?.permissions).toEqual([...BUILTIN_ROLES.patient!.permissions]);
    await side.raw(T).insertRole({ name: 'Night-Nurse ', permissions: ['profile:read'] });
    expect(await r().roles.findByName('night-nurse')).toMatchObject({ permissions: ['profile:read'], builtin: false });
    const names = (await r().roles.list()).map((x) => x.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining([...Object.keys(BUILTIN_ROLES), 'night-nurse']));
    const dup = await side
      .raw(T)
      .insertRole({ name: 'night-nurse', permissions: [] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(toAppError(dup).code).toBe('conflict');
    expect(await r().roles.findByName('nobody')).toBeNull();
  });
});
