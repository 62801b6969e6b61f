import type { Connection } from 'mongoose';

/**
 * What the data layer must know about the MongoDB-protocol server behind the connection. MongoDB and
 * mongo-java-server behave alike on everything the repositories rely on; FerretDB v1 does not, and its
 * work-arounds are switched on here only (the FerretDB adapter, decision 007):
 * - a guarded update (`updateOne({ _id, status: 'a' }, ...)`) is a read followed by a write by `_id`, so
 *   concurrent callers can all win: single-winner updates go through a claim insert (transition-claim.ts);
 * - each statement of an `update` command holds one of a database's 100 connections until the command
 *   returns: bulk updates go in commands of at most 10 statements (bulk-updates.ts);
 * - a duplicate key met by an update answers code 1 instead of 11000 (isDuplicateKey in src/kernel/errors.ts);
 * - `$pull` with a condition (`{ outbox: { id: { $in } } }`) removes nothing, and says it modified
 *   nothing: the relay pulls published outbox entries by their whole value (`$pullAll`) there.
 */
export interface ServerTraits {
  kind: 'ferretdb' | 'mongodb';
  /** A guarded update or findOneAndUpdate is a compare-and-set (one winner among concurrent callers). */
  atomicGuardedUpdate: boolean;
  /** Most update statements per bulk command (statements beyond go in the next command). */
  updatesPerCommand: number;
  /**
   * How `sort` orders strings: by code point (UTF-8 bytes: MongoDB, FerretDB) or by UTF-16 code unit
   * (mongo-java-server, Java's String order). They differ only between astral characters and BMP
   * characters from U+E000; the in-memory contact directory sorts as its server does (decision 212).
   */
  stringOrder: 'code-point' | 'code-unit';
  /**
   * The server answers an anchored prefix regex on a non-unique multikey index from the index (MongoDB).
   * mongo-java-server answers no regex from an index (its launcher's non-unique indexes take values, decision 1162),
   * FerretDB v1 pushes no regex down.
   */
  indexedSearch: boolean;
  /** `$pull` removes the array elements a condition matches (not only elements equal to a value). */
  pullByCondition: boolean;
  /**
   * A sort by `_id` with a limit is answered from the `_id` index (MongoDB). mongo-java-server reads and
   * sorts every document for it: the event log's head, read so, took 30 s at 539,000 entries under B10's
   * load, holding the collection (2026-12-02); its repository finds the head by reads by `_id` there.
   */
  idOrderFromIndex: boolean;
}

/** MongoDB and servers that behave like it (mongo-java-server). */
export const MONGODB_TRAITS: ServerTraits = Object.freeze({
  kind: 'mongodb',
  atomicGuardedUpdate: true,
  updatesPerCommand: 1000,
  stringOrder: 'code-point',
  indexedSearch: true,
  pullByCondition: true,
  idOrderFromIndex: true,
});
/** mongo-java-server: MongoDB's behaviour except Java's string order. */
export const MONGO_JAVA_SERVER_TRAITS: ServerTraits = Object.freeze({
  ...MONGODB_TRAITS,
  stringOrder: 'code-unit',
  indexedSearch: false,
  idOrderFromIndex: false,
});
export const FERRETDB_TRAITS: ServerTraits = Object.freeze({
  kind: 'ferretdb',
  atomicGuardedUpdate: false,
  updatesPerCommand: 10,
  stringOrder: 'code-point',
  indexedSearch: false,
  pullByCondition: false,
  idOrderFromIndex: true,
});

/**
 * Tells FerretDB (its buildInfo names its own version) from MongoDB and look-alikes; mongo-java-server's
 * buildInfo is the bare minimum (no `gitVersion`, which MongoDB always reports).
 */
export async function detectServer(conn: Connection): Promise<ServerTraits> {
  const info = (await conn.db!.admin().command({ buildInfo: 1 })) as {
    ferretdbVersion?: string;
    ferretdb?: unknown;
    gitVersion?: string;
  };
  if (info.ferretdbVersion || info.ferretdb) return FERRETDB_TRAITS;
  return info.gitVersion ? MONGODB_TRAITS : MONGO_JAVA_SERVER_TRAITS;
}
