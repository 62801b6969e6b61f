import mongoose, { type Model } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** A claim older than this whose update never landed (its writer died) is rolled forward by the next caller. */
const STALE_MS = 10_000;

interface ClaimDoc {
  _id: string;
  at: Date;
  /** The update as Extended JSON: FerretDB refuses stored keys starting with `$` or containing `.`. */
  update: string;
}

const { EJSON } = mongoose.mongo.BSON;

/**
 * Exclusive transitions of an acyclic state machine, on every MongoDB-protocol server.
 *
 * FerretDB v1 runs a guarded update (`updateOne({ _id, status: 'started' }, ...)`) as a read followed
 * by a write by `_id`, so two concurrent callers can both "win" (measured: most races double-win),
 * while MongoDB and mongo-java-server apply it atomically. Inserting a document with a given `_id`
 * is atomic everywhere. In an acyclic machine a document leaves each state at most once, so the key
 * `<collection>:<id>:<from>` names that single departure: the first insert wins, and the guarded update
 * that follows has no competitor. The claim records the update, so if its writer dies in between, a
 * later caller applies it (roll forward) instead of leaving the document stuck in `from`.
 */
export async function claimedTransition<T>(
  db: TenantDb,
  model: Model<any>,
  id: unknown,
  from: string,
  update: Record<string, unknown>,
): Promise<T | null> {
  const claims = db.conn.collection<ClaimDoc>('_transition_claims');
  const key = `${model.collection.collectionName}:${String(id)}:${from}`;
  try {
    await claims.insertOne({ _id: key, at: new Date(), update: EJSON.stringify(update, { relaxed: false }) });
  } catch (e) {
    if ((e as { code?: number }).code !== 11000) throw e;
    const prior = await claims.findOne({ _id: key });
    if (prior && Date.now() - prior.at.getTime() > STALE_MS) await model.updateOne({ _id: id, status: from }, EJSON.parse(prior.update)).exec();
    return null;
  }
  return model.findOneAndUpdate({ _id: id, status: from }, update, { returnDocument: 'after' }).lean<T>().exec();
}
