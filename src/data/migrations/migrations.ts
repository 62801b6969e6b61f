import type { TenantDb } from '../mongo.js';
import { TENANT_MODEL_NAMES } from '../tenant-models.js';
import { BUILTIN_ROLES } from '../../auth/permissions.js';
import { defaultSettings, DEFAULT_PERIPHERAL_TYPES } from '../../core/tenant-defaults.js';

export interface Migration {
  version: number;
  name: string;
  /** Must be idempotent: a crash between `up` and recording the version re-runs it. */
  up(db: TenantDb, ctx: { displayName: string }): Promise<void>;
}

/** Ordered, append-only. Never edit a shipped migration; add a new version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'collections',
    async up(db) {
      for (const name of TENANT_MODEL_NAMES) await db.models[name].createCollection().catch(ignoreExists);
    },
  },
  {
    version: 2,
    name: 'builtin-roles',
    async up(db) {
      for (const [name, role] of Object.entries(BUILTIN_ROLES)) {
        await db.models.Role.updateOne(
          { name },
          { $set: { description: role.description, permissions: [...role.permissions], builtin: true } },
          { upsert: true },
        );
      }
    },
  },
  {
    version: 3,
    name: 'peripheral-types',
    async up(db) {
      for (const t of DEFAULT_PERIPHERAL_TYPES) {
        await db.models.PeripheralType.updateOne({ key: t.key }, { $setOnInsert: t }, { upsert: true });
      }
    },
  },
  {
    version: 4,
    name: 'tenant-settings',
    async up(db, ctx) {
      const { _id, ...defaults } = defaultSettings(ctx.displayName);
      await db.models.Settings.updateOne({ _id }, { $setOnInsert: defaults }, { upsert: true });
    },
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

function ignoreExists(e: { codeName?: string; code?: number }) {
  if (e?.codeName === 'NamespaceExists' || e?.code === 48) return;
  throw e;
}
