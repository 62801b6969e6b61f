import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { TENANT_MODEL_NAMES } from '../../../src/data/tenant-models.js';
import { MIGRATIONS, LATEST_VERSION } from '../../../src/data/migrations/migrations.js';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { DEFAULT_PERIPHERAL_TYPES } from '../../../src/data/tenant-defaults.js';
import type { TenantDb } from '../../../src/data/mongo.js';
import { keyOf } from './fixtures.js';

/** Every index of every tenant collection, as sorted `collection key unique` lines. */
async function indexSnapshot(db: TenantDb): Promise<string[]> {
  const lines: string[] = [];
  for (const name of TENANT_MODEL_NAMES) {
    const col = db.models[name].collection;
    for (const ix of await col.listIndexes().toArray())
      lines.push(`${col.collectionName} ${keyOf(ix.key)} ${Boolean(ix.unique)}`);
  }
  return lines.sort();
}

/** What the seed migrations wrote, counted, so a second run that duplicates anything shows. */
async function seedCounts(db: TenantDb) {
  return {
    roles: await db.models.Role.countDocuments().exec(),
    peripheralTypes: await db.models.PeripheralType.countDocuments().exec(),
    settings: await db.models.TenantConfig.countDocuments().exec(),
    migrations: await db.conn.collection('_migrations').countDocuments(),
  };
}

const EXPECTED_SEED = {
  roles: Object.keys(BUILTIN_ROLES).length,
  peripheralTypes: DEFAULT_PERIPHERAL_TYPES.length,
  settings: 1,
  migrations: MIGRATIONS.length,
};

describe('data layer: versioned migrations', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(async () => node.destroy());

  it('applies every migration once, then nothing on the second run, with the same indexes', async () => {
    const { migration: first } = await node.services.tenants.create({ name: 'twice', displayName: 'Twice Clinic' });
    expect(first.from).toBe(0);
    expect(first.to).toBe(LATEST_VERSION);
    expect(first.applied).toEqual(MIGRATIONS.map((m) => `${m.version}:${m.name}`));
    const db = node.infra.mongo.tenantDb('twice');
    const indexesAfterFirst = await indexSnapshot(db);
    const countsAfterFirst = await seedCounts(db);
    expect(countsAfterFirst).toEqual(EXPECTED_SEED);

    const second = await node.services.tenants.migrate('twice');
    expect(second).toMatchObject({ from: LATEST_VERSION, to: LATEST_VERSION, applied: [] });
    expect(await indexSnapshot(db)).toEqual(indexesAfterFirst);
    expect(await seedCounts(db)).toEqual(countsAfterFirst);
    const tenant = (await node.services.tenants.list()).find((t) => t.name === 'twice');
    expect(tenant?.schemaVersion).toBe(LATEST_VERSION);
  });

  it('creates every collection of the tenant database', async () => {
    const db = node.infra.mongo.tenantDb('twice');
    const names = (await db.conn.db!.listCollections().toArray()).map((c) => c.name);
    for (const model of TENANT_MODEL_NAMES) expect(names).toContain(db.models[model].collection.collectionName);
  });

  it('keeps tenant settings an admin changed when migrating again', async () => {
    const db = node.infra.mongo.tenantDb('twice');
    await db.models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 1234 } }).exec();
    await node.services.tenants.migrate('twice');
    const settings = await db.models.TenantConfig.findById('tenant').lean().exec();
    expect(settings?.uploads?.maxBytes).toBe(1234);
  });

  it('is safe when the same tenant is migrated concurrently', async () => {
    const results = await Promise.all(
      [1, 2, 3].map(() => node.services.tenants.ensure({ name: 'racing', displayName: 'Racing Clinic' })),
    );
    for (const r of results) expect(r.to).toBe(LATEST_VERSION);
    const db = node.infra.mongo.tenantDb('racing');
    expect(await seedCounts(db)).toEqual(EXPECTED_SEED);
    const tenants = await node.services.tenants.list();
    expect(tenants.filter((t) => t.name === 'racing')).toHaveLength(1);
    const again = await node.services.tenants.migrate('racing');
    expect(again.applied).toEqual([]);
    expect(await indexSnapshot(db)).toEqual(await indexSnapshot(node.infra.mongo.tenantDb('twice')));
  });

  it('is safe when two nodes migrate the same tenant at once', async () => {
    const other = await startTestNode({
      MONGODB_CATALOG_DB: node.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: node.config.mongo.tenantDbPrefix,
    });
    try {
      const [a, b] = await Promise.all([
        node.services.tenants.ensure({ name: 'shared', displayName: 'Shared Clinic' }),
        other.services.tenants.ensure({ name: 'shared', displayName: 'Shared Clinic' }),
      ]);
      expect([...a.applied, ...b.applied].sort()).toEqual(MIGRATIONS.map((m) => `${m.version}:${m.name}`).sort());
      expect(await seedCounts(node.infra.mongo.tenantDb('shared'))).toEqual(EXPECTED_SEED);
    } finally {
      await other.stop();
    }
  });

  it('refuses to migrate a tenant that does not exist, and an invalid name, with coded errors', async () => {
    await expect(node.services.tenants.migrate('ghost')).rejects.toMatchObject({
      code: 'tenant_not_found',
      status: 404,
    });
    await expect(node.services.tenants.migrate('../etc')).rejects.toMatchObject({
      code: 'validation_failed',
      status: 400,
    });
  });
});
