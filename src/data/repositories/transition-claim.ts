import mongoose, { type Model } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** A claim older than this whose update never landed (its writer died) is rolled forward by the next caller. */
const STALE_MS = 10_000;

interface ClaimDoc {
  _id: string;
  at: Date;
  /** Filter and update as Extended JSON: FerretDB refuses stored keys starting with `$` or containing `.`. */
  filter: string;
  update: string;
}

const { EJSON } = mongoose.mongo.BSON;

/**
 * A conditional update that exactly one caller wins, on every MongoDB-protocol server. On MongoDB and
 * mongo-java-server the guarded `findOneAndUpdate` already is a compare-and-set and runs alone; the
 * claim below is FerretDB's adapter (`db.server.atomicGuardedUpdate` false, server-traits.ts).
 *
 * FerretDB v1 runs a guarded update (`updateOne({ _id, status: 'started' }, ...)`) as a read followed
 * by a write by `_id`, so concurrent callers can all "win" (measured: most races double-win), while
 * MongoDB and mongo-java-server apply it atomically. Inserting a document with a given `_id` is atomic
 * everywhere. `key` names the change (leaving a status, consuming a single-use token): while a claim of
 * the key exists, other callers lose at once; the winner's guarded update has no concurrent competitor,
 * and the claim is removed after it, so a later caller's guarded update sees the new state and fails
 * as it should. The claim records the update, so if its writer dies in between, a later caller applies
 * it (roll forward) instead of leaving the document stuck.
 */
export async function claimedUpdate<T>(
  db: TenantDb,
  model: Model<any>,
  key: string,
  filter: Record<string, unknown>,
  update: Record<string, unknown>,
): Promise<T | null> {
  if (db.server.atomicGuardedUpdate)
    return model.findOneAndUpdate(filter, update, { returnDocument: 'after' }).lean<T>().exec();
  const claims = db.conn.collection<ClaimDoc>('_transition_claims');
  const id = `${model.collection.collectionName}:${key}`;
  try {
    await claims.insertOne({
      _id: id,
      at: new Date(),
      filter: EJSON.stringify(filter, { relaxed: false }),
      update: EJSON.stringify(update, { relaxed: false }),
    });
  } catch (e) {
    if ((e as { code?: number }).code !== 11000) throw e;
    const prior = await claims.findOne({ _id: id });
    if (prior && Date.now() - prior.at.getTime() > STALE_MS) {
      await model.updateOne(EJSON.parse(prior.filter), EJSON.parse(prior.update)).exec();
      await claims.deleteOne({ _id: id, at: prior.at });
    }
    return null;
  }
  const result = await model.findOneAndUpdate(filter, update, { returnDocument: 'after' }).lean<T>().exec();
  // The claim only has to outlive the write: a later caller that claims again re-reads the document
  // in its own guarded update, after this write, and finds the guard no longer matching.
  await claims.deleteOne({ _id: id });
  return result;
}

/** Moves document `id` out of status `from`: the single departure from that status wins. */
export function claimedTransition<T>(
  db: TenantDb,
  model: Model<any>,
  id: unknown,
  from: string,
  update: Record<string, unknown>,
): Promise<T | null> {
  return claimedUpdate<T>(db, model, `${String(id)}:${from}`, { _id: id, status: from }, update);
}
