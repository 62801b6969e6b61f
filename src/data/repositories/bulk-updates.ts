import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import type { ServerTraits } from '../server-traits.js';

/**
 * An unordered bulk of update statements, in commands of at most `server.updatesPerCommand` sent one
 * after another. MongoDB and mongo-java-server take a thousand per command; FerretDB 1.x on SQLite keeps
 * each statement's query (and its connection) open until the whole command returns, and a database has
 * at most 100 connections shared by every client: a command of about 100 statements, or a few
 * concurrent commands of 50, wait for each other forever and wedge that database, so it gets 10.
 */
export async function bulkUpdate<T extends Document>(
  server: ServerTraits,
  collection: Collection<T>,
  ops: readonly AnyBulkWriteOperation<T>[],
): Promise<void> {
  const size = server.updatesPerCommand;
  for (let i = 0; i < ops.length; i += size) {
    await collection.bulkWrite(ops.slice(i, i + size) as AnyBulkWriteOperation<T>[], { ordered: false });
  }
}
