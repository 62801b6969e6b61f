import { AppError } from '../kernel/errors.js';

/**
 * What a write that can change a care team tells the care-team cache (decision 1132): `begin` before it
 * (a mark held until `end`, or until it runs out, and a new generation) and `end` after it (the mark
 * cleared, and a new generation again). Implemented by src/data/stores/care-team.store.ts.
 */
export interface CareTeamWrites {
  begin(tenant: string): Promise<string>;
  end(tenant: string, token: string): Promise<void>;
}

/**
 * Runs `write` between `begin` and `end`. A write whose mark could not be set is refused before it
 * runs (a cache that missed it could serve a care team without it); an `end` that fails is left to the
 * mark's own expiry, until which no care team of the tenant is cached.
 */
export async function careTeamWrite<T>(
  marks: CareTeamWrites | undefined,
  tenant: string,
  write: () => Promise<T>,
): Promise<T> {
  if (!marks) return write();
  let token: string;
  try {
    token = await marks.begin(tenant);
  } catch (e) {
    throw new AppError('service_unavailable', 'The care-team cache could not be told of a write', {
      cause: e,
      retryAfter: 5,
    });
  }
  try {
    return await write();
  } finally {
    await marks.end(tenant, token).catch(() => undefined);
  }
}
