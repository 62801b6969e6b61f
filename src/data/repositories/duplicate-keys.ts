import { isDuplicateKey } from '../../kernel/errors.js';

type WriteError = { index?: number; code?: number; err?: { code?: number; index?: number } };
type InsertError = { code?: number; writeErrors?: WriteError[] | WriteError; writeConcernErrors?: unknown[] };

function writeErrors(e: unknown): WriteError[] {
  const list = (e as InsertError | undefined)?.writeErrors;
  return Array.isArray(list) ? list : list ? [list] : [];
}

/**
 * Positions an unordered `insertMany` refused, when it failed only on duplicate keys (rows stored
 * already, or by a concurrent writer); null for any other failure, which the caller must rethrow.
 * Inserting first and reading only the refused rows is the cheap path on every MongoDB-wire server.
 */
export function duplicateIndexes(e: unknown): number[] | null {
  if ((e as InsertError | undefined)?.writeConcernErrors?.length) return null;
  const list = writeErrors(e);
  if (!list.length || !list.every((w) => (w.code ?? w.err?.code) === 11000)) return null;
  const indexes = list.map((w) => w.index ?? w.err?.index);
  return indexes.every((i): i is number => typeof i === 'number') ? indexes : null;
}

/** True when a write failed only on duplicate keys (a single insert's error has no write-error list). */
export function isDuplicateKeyOnly(e: unknown): boolean {
  const list = writeErrors(e);
  if (!list.length) return (e as InsertError | undefined)?.code === 11000;
  return list.every((w) => (w.code ?? w.err?.code) === 11000);
}

/** For idempotent upserts: a duplicate key means a concurrent writer stored the same thing first. */
export function ignoreDuplicate(e: unknown): void {
  if (!isDuplicateKey(e)) throw e;
}
