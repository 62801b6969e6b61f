/**
 * What a write that can change a care team tells the care-team cache (decision 1132): `begin` before it
 * (a mark held until `end`, or until it runs out, and a new generation) and `end` after it (the mark
 * cleared, and a new generation again). `owe`: a write went through without its marks (Redis could not
 * be reached); the tenant's generation is changed as soon as Redis answers again. Implemented by
 * src/data/stores/care-team.store.ts.
 */
export interface CareTeamWrites {
  begin(tenant: string): Promise<string>;
  end(tenant: string, token: string): Promise<void>;
  owe(tenant: string): void;
}

/**
 * Runs `write` between `begin` and `end`. A write is never refused for the cache's sake: scheduling goes on
 * while Redis is away (its changes are committed and announced from MongoDB alone). A write whose mark could
 * not be set, or whose end could not be told, leaves the tenant owed a new generation, which its process
 * sets once Redis answers and before it serves any care team of that tenant from the cache.
 */
export async function careTeamWrite<T>(
  marks: CareTeamWrites | undefined,
  tenant: string,
  write: () => Promise<T>,
): Promise<T> {
  if (!marks) return write();
  const token = await marks.begin(tenant).catch(() => undefined);
  try {
    return await write();
  } finally {
    if (token === undefined) marks.owe(tenant);
    else await marks.end(tenant, token).catch(() => marks.owe(tenant));
  }
}
