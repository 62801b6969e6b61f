import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { TenantDb } from '../mongo.js';
import { AppError } from '../../kernel/errors.js';

/** How long a lock holder may run before another migrator may take the lock over (it crashed). */
const LEASE_MS = 5 * 60_000;
/** How long a second migrator waits for the first before giving up with a retryable error. */
const WAIT_MS = 60_000;

interface LockDoc {
  _id: string;
  owner: string;
  expiresAt: Date;
}

/**
 * Runs `fn` while holding the tenant's migration lock: one document with a fixed `_id`, so the
 * unique `_id` index decides the winner without transactions (FerretDB has none). Provisioning, the
 * CLI and `npm start` may migrate the same tenant at once; the others wait, then see nothing to do.
 */
export async function withMigrationLock<T>(db: TenantDb, fn: () => Promise<T>): Promise<T> {
  const col = db.conn.collection<LockDoc>('_migration_lock');
  const owner = randomUUID();
  const giveUpAt = Date.now() + WAIT_MS;
  for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
    try {
      await col.insertOne({ _id: 'lock', owner, expiresAt: new Date(Date.now() + LEASE_MS) });
      break;
    } catch (e) {
      if ((e as { code?: number }).code !== 11000) throw e;
      const stale = await col.deleteOne({ _id: 'lock', expiresAt: { $lt: new Date() } });
      if (stale.deletedCount) continue;
      if (Date.now() > giveUpAt)
        throw new AppError('service_unavailable', `Another migration of tenant '${db.tenant}' is running`, {
          retryAfter: 5,
        });
      await delay(wait);
    }
  }
  try {
    return await fn();
  } finally {
    await col.deleteOne({ _id: 'lock', owner });
  }
}
