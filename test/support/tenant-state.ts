import { TENANT_MODEL_NAMES } from '../../src/data/tenant-models.js';
import type { NodeHandle } from '../../src/node.js';

/** Fields that change without any request of the tenant's (presence writes lastSeenAt on its own schedule). */
const VOLATILE = new Set(['lastSeenAt']);

function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object' && !(v instanceof Date) && v.constructor?.name === 'Object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, stable(x)]));
  }
  if (v && typeof v === 'object' && 'toHexString' in v) return String(v);
  return v;
}

/**
 * Everything a tenant has stored: every document of every collection of its database and every
 * actor snapshot of its actors in Redis, in a stable form. Two reads that compare equal mean nothing
 * the tenant owns changed in between (read before and after a refused request).
 */
export async function tenantState(node: NodeHandle, tenant: string, collections: readonly string[] = TENANT_MODEL_NAMES): Promise<Record<string, unknown>> {
  const db = node.infra.mongo.tenantDb(tenant);
  const out: Record<string, unknown> = {};
  for (const name of collections) {
    const model = (db.models as unknown as Record<string, { find(q: object): { sort(s: object): { lean(): { exec(): Promise<unknown[]> } } } }>)[name]!;
    out[name] = stable(await model.find({}).sort({ _id: 1 }).lean().exec());
  }
  const redis = node.infra.redis;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${node.infra.keys.actors}*snap:${tenant}/*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  keys.sort();
  const values = keys.length ? await redis.mget(...keys) : [];
  out.actors = Object.fromEntries(keys.map((k, i) => [k, values[i] === null ? null : stable(JSON.parse(values[i]!))]));
  return out;
}
