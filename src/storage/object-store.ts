import type { Readable } from 'node:stream';
import { AppError } from '../kernel/errors.js';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Strong validator: the object's content hash when content-addressed, else the driver's etag. */
  etag: string;
  contentType?: string;
  lastModified?: Date;
}

export interface ByteRange {
  start: number;
  /** Inclusive end offset. */
  end: number;
}

export interface PutResult {
  key: string;
  size: number;
  /** Hex SHA-256 of the bytes written. */
  sha256: string;
  /** False when an object with the same content already existed (nothing new was stored). */
  created: boolean;
}

/**
 * Binary storage behind one interface (SPEC: the service does not address a storage provider
 * directly). Bodies stream in both directions; drivers never hold a whole object in memory, except
 * through `read`, which is bounded by its caller.
 */
export interface ObjectStore {
  readonly driver: 'fs' | 's3';
  /**
   * Streams `body` into the store under `${prefix}/${sha256}` (content-addressed): the same bytes are
   * stored once. `maxBytes` aborts the write (and leaves nothing behind) when exceeded.
   */
  putContentAddressed(
    prefix: string,
    body: Readable,
    opts?: { contentType?: string; maxBytes?: number },
  ): Promise<PutResult>;
  /** Streams `body` to an exact key (thumbnails, derived objects). */
  put(key: string, body: Readable | Buffer, opts?: { contentType?: string }): Promise<PutResult>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Streams an object, or the inclusive byte range of it. Throws file_not_found when absent. */
  get(key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable }>;
  /**
   * Reads a whole object of at most `maxBytes` into memory, for work that needs it whole anyway (a
   * thumbnail decodes from memory). Throws file_not_found when absent, payload_too_large when larger.
   * `into`, when given, supplies the memory for an object of the size it is asked (at least that long):
   * the bytes are read into its start and a view of them is returned. A driver that learns the size only
   * by reading (S3) allocates its own.
   */
  read(key: string, maxBytes: number, into?: (size: number) => Buffer): Promise<Buffer>;
  /**
   * Where a whole object of at most `maxBytes` lies on this machine, for a reader that opens it itself
   * (libvips decodes a thumbnail's source from its path in its own threads, with no copy in the
   * process's memory). Only a driver whose objects are local files has it; same errors as `read`.
   */
  localFile?(key: string, maxBytes: number): Promise<string>;
  delete(key: string): Promise<void>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<void>;
  /** Releases sockets or handles the driver holds (optional). */
  close?(): void;
}

/**
 * Refuses keys that could escape the store's namespace or reach the drivers' own bookkeeping
 * (hidden segments such as the staging area, `.meta` side files); every driver calls it.
 */
export function assertSafeKey(key: string): void {
  if (!isSafeKey(key)) throw new AppError('bad_request', 'Invalid object path');
}

/** The predicate behind assertSafeKey, for callers that answer bad input with their own error. */
export function isSafeKey(key: string): boolean {
  if (
    !key ||
    key.length > 1024 ||
    key.startsWith('/') ||
    key.includes('\\') ||
    key.includes('\0') ||
    key.endsWith('.meta')
  )
    return false;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(key)) return false;
  return !key.split('/').some((s) => s === '' || s.startsWith('.'));
}

/** Content-addressed keys end in the hex SHA-256 of the bytes, which is then the strongest possible ETag. */
export function contentEtag(key: string): string | undefined {
  const base = key.slice(key.lastIndexOf('/') + 1);
  return /^[a-f0-9]{64}$/.test(base) ? base : undefined;
}
