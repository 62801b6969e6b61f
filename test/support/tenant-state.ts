import { TENANT_MODEL_NAMES } from '../../src/data/tenant-models.js';
import type { NodeHandle } from '../../src/composition/node.js';

/** Fields that change without any request of the tenant's (presence writes lastSeenAt on its own schedule). */
const VOLATILE = new Set(['lastSeenAt']);

function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object' && !(v instanceof Date) && v.constructor?.name === 'Object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !VOLATILE.has(k))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, stable(x)]),
    );
  }
  if (v && typeof v === 'object' && 'toHexString' in v) return String(v);
  return v;
}

/**
 * Everything a tenant has stored: every document of every collection of its database and every
 * actor snapshot of its actors in Redis (SCAN: cheap on a Redis database of the test's own, see
 * `privateRedisDb`), in a stable form. Two reads that compare equal mean nothing
 * the tenant owns changed in between (read before and after a refused request).
 */
export async function tenantState(
  node: NodeHandle,
  tenant: string,
  opts: { collections?: readonly string[]; actors?: boolean } = {},
): Promise<Record<string, unknown>> {
  const { collections = TENANT_MODEL_NAMES, actors = true } = opts;
  const db = node.infra.mongo.tenantDb(tenant);
  const models = db.models as unknown as Record<
    string,
    {
      collection: { collectionName: string };
      find(q: object): { sort(s: object): { lean(): { exec(): Promise<unknown[]> } } };
    }
  >;
  // Collections that do not exist yet hold nothing: only existing ones are read (a write creating one shows as a new key).
  const existing = new Set((await db.conn.db!.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  const read = collections.filter((name) => existing.has(models[name]!.collection.collectionName));
  const docs = await Promise.all(read.map((name) => models[name]!.find({}).sort({ _id: 1 }).lean().exec()));
  const out: Record<string, unknown> = Object.fromEntries(read.map((name, i) => [name, stable(docs[i])]));
  if (!actors) return out;
  const redis = node.infra.redis;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(
      cursor,
      'MATCH',
      `${node.infra.keys.actors}*snap:${tenant}/*`,
      'COUNT',
      1000,
    );
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  keys.sort();
  const values = keys.length ? await redis.mget(...keys) : [];
  out.actors = Object.fromEntries(keys.map((k, i) => [k, values[i] === null ? null : stable(JSON.parse(values[i]!))]));
  return out;
}

/**
 * A Redis logical database other than the shared default one, for a node whose test reads its actor
 * snapshots often: SCAN then walks this test's keys rather than every key of every concurrent test.
 */
export function privateRedisDb(): string {
  const base = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';
  return `${base.replace(/\/\d*$/, '')}/${1 + (process.pid % 15)}`;
}
