import { Types } from 'mongoose';
import { AppError, type ErrorCode } from './errors.js';

const HEX24 = /^[a-f0-9]{24}$/i;

/** True for the 24-hex-digit ids the API hands out (not the 12-byte strings ObjectId also accepts). */
export function isObjectIdString(s: unknown): s is string {
  return typeof s === 'string' && HEX24.test(s);
}

/** Parses an id from the wire; a malformed id is answered like a missing one, so ids are not probed. */
export function oid(s: string, notFound: ErrorCode = 'not_found'): Types.ObjectId {
  if (!isObjectIdString(s)) throw new AppError(notFound);
  return new Types.ObjectId(s);
}

export function oids(list: readonly string[]): Types.ObjectId[] {
  return list.filter(isObjectIdString).map((s) => new Types.ObjectId(s));
}
