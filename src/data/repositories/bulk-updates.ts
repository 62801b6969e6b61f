import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';

/**
 * Most update statements sent in one command; the commands of one call go one after another. FerretDB
 * 1.x on SQLite keeps each statement's query (and its connection) open until the whole command returns,
 * and a database has at most 100 connections shared by every client: a command of about 100 statements,
 * or a few concurrent commands of 50, wait for each other forever and wedge that database (and any later
 * drop of it). MongoDB takes any number; 10 per command still saves nine round trips in ten.
 */
export const UPDATES_PER_COMMAND = 10;

/** An unordered bulk of update statements, sent in commands of at most UPDATES_PER_COMMAND. */
export async function bulkUpdate<T extends Document>(collection: Collection<T>, ops: readonly AnyBulkWriteOperation<T>[]): Promise<void> {
  for (let i = 0; i < ops.length; i += UPDATES_PER_COMMAND) {
    await collection.bulkWrite(ops.slice(i, i + UPDATES_PER_COMMAND) as AnyBulkWriteOperation<T>[], { ordered: false });
  }
}
