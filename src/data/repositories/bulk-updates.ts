import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';

/**
 * Most update statements sent in one command. FerretDB 1.x on SQLite keeps each statement's query
 * open until the whole command returns, with at most 100 connections per database: a command of more
 * than about 100 statements waits for itself forever and wedges that database (and any later drop of
 * it). MongoDB takes any number; 50 per command costs it one round trip per 50 rows.
 */
export const UPDATES_PER_COMMAND = 50;

/** An unordered bulk of update statements, sent in commands of at most UPDATES_PER_COMMAND. */
export async function bulkUpdate<T extends Document>(collection: Collection<T>, ops: readonly AnyBulkWriteOperation<T>[]): Promise<void> {
  for (let i = 0; i < ops.length; i += UPDATES_PER_COMMAND) {
    await collection.bulkWrite(ops.slice(i, i + UPDATES_PER_COMMAND) as AnyBulkWriteOperation<T>[], { ordered: false });
  }
}
