import type { Connection } from 'mongoose';

/**
 * What the data layer must know about the MongoDB-protocol server behind the connection. MongoDB and
 * mongo-java-server behave alike on everything the repositories rely on; FerretDB v1 does not, and its
 * work-arounds are switched on here only (the FerretDB adapter, decision 007):
 * - a guarded update (`updateOne({ _id, status: 'a' }, ...)`) is a read followed by a write by `_id`, so
 *   concurrent callers can all win: single-winner updates go through a claim insert (transition-claim.ts);
 * - each statement of an `update` command holds one of a database's 100 connections until the command
 *   returns: bulk updates go in commands of at most 10 statements (bulk-updates.ts);
 * - a duplicate key met by an update answers code 1 instead of 11000 (duplicate-keys.ts).
 */
export interface ServerTraits {
  kind: 'ferretdb' | 'mongodb';
  /** A guarded update or findOneAndUpdate is a compare-and-set (one winner among concurrent callers). */
  atomicGuardedUpdate: boolean;
  /** Most update statements per bulk command (statements beyond go in the next command). */
  updatesPerCommand: number;
}

/** MongoDB and servers that behave like it (mongo-java-server). */
export const MONGODB_TRAITS: ServerTraits = Object.freeze({ kind: 'mongodb', atomicGuardedUpdate: true, updatesPerCommand: 1000 });
export const FERRETDB_TRAITS: ServerTraits = Object.freeze({ kind: 'ferretdb', atomicGuardedUpdate: false, updatesPerCommand: 10 });

/** Tells FerretDB (its buildInfo names its own version) from MongoDB and look-alikes. */
export async function detectServer(conn: Connection): Promise<ServerTraits> {
  const info = (await conn.db!.admin().command({ buildInfo: 1 })) as { ferretdbVersion?: string; ferretdb?: unknown };
  return info.ferretdbVersion || info.ferretdb ? FERRETDB_TRAITS : MONGODB_TRAITS;
}
