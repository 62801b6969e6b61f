import type { TenantDb } from '../mongo.js';
import { TENANT_MODEL_NAMES } from '../tenant-models.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { withMigrationLock } from './migration-lock.js';

export interface MigrationResult {
  from: number;
  to: number;
  applied: string[];
  indexesEnsured: number;
}

/**
 * Applies pending migrations in order and records each in `_migrations`; then ensures every
 * model's indexes (idempotent, so new indexes reach existing tenants on their next migrate).
 * Concurrent callers for one tenant are serialised by the tenant's migration lock.
 */
export function migrateTenant(
  db: TenantDb,
  ctx: { displayName: string },
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationResult> {
  return withMigrationLock(db, () => applyPending(db, ctx, migrations));
}

async function applyPending(
  db: TenantDb,
  ctx: { displayName: string },
  migrations: readonly Migration[],
): Promise<MigrationResult> {
  const col = db.conn.collection<{ _id: number; name: string; appliedAt: Date }>('_migrations');
  const done = new Set((await col.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
  const from = done.size ? Math.max(...done) : 0;
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    await m.up(db, ctx);
    await col.updateOne(
      { _id: m.version },
      { $setOnInsert: { name: m.name, appliedAt: new Date() } },
      { upsert: true },
    );
    applied.push(`${m.version}:${m.name}`);
  }
  let indexesEnsured = 0;
  for (const name of TENANT_MODEL_NAMES) {
    const model = db.models[name];
    await model.createIndexes();
    indexesEnsured += model.schema.indexes().length;
  }
  const to = Math.max(from, ...migrations.map((m) => m.version));
  return { from, to, applied, indexesEnsured };
}
