import type { Readable } from 'node:stream';

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
 * directly). Bodies stream in both directions; drivers never hold a whole object in memory.
 */
export interface ObjectStore {
  readonly driver: 'fs' | 's3';
  /**
   * Streams `body` into the store under `${prefix}/${sha256}` (content-addressed): the same bytes are
   * stored once. `maxBytes` aborts the write (and leaves nothing behind) when exceeded.
   */
  putContentAddressed(prefix: string, body: Readable, opts?: { contentType?: string; maxBytes?: number }): Promise<PutResult>;
  /** Streams `body` to an exact key (thumbnails, derived objects). */
  put(key: string, body: Readable | Buffer, opts?: { contentType?: string }): Promise<PutResult>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Streams an object, or the inclusive byte range of it. Throws file_not_found when absent. */
  get(key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable }>;
  delete(key: string): Promise<void>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<void>;
}

/** Refuses keys that could escape the store's namespace; every driver calls it. */
export function assertSafeKey(key: string): void {
  if (!key || key.length > 1024 || key.startsWith('/') || key.includes('\\') || key.includes('\0') || key.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(`unsafe object key: ${JSON.stringify(key)}`);
  }
}
