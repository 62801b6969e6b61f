import { createHash, randomUUID } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, rename, rm, stat, access, writeFile, readFile, open } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../kernel/errors.js';
import { layout } from './layout.js';
import {
  assertSafeKey,
  contentEtag,
  type ByteRange,
  type ObjectInfo,
  type ObjectStore,
  type PutResult,
} from './object-store.js';

/** Counts and hashes bytes in flight; aborts past maxBytes. */
export function hashingLimiter(maxBytes = Number.POSITIVE_INFINITY) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) return cb(new AppError('payload_too_large', `File exceeds the limit of ${maxBytes} bytes`));
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex') }) };
}

/** Objects up to this size are read and written with synchronous calls by default (decision 1190). */
export const FS_SYNC_BYTES = 1024 * 1024;

/**
 * Filesystem driver, the embedded default: objects are files under `root`, written via temp + rename.
 * An object up to `syncBytes` (STORAGE_FS_SYNC_BYTES; 0: none) read whole into memory (`read`) or put
 * from a buffer (`put`) is read or written with synchronous calls (decision 1190): for a thumbnail or
 * its source, a copy of a few hundred kilobytes from the page cache takes less of the machine than the
 * four hand-offs to the libuv threads an asynchronous read or write makes (open, stat or write, close,
 * rename). Larger objects, streams and every other call stay asynchronous.
 */
export class FsObjectStore implements ObjectStore {
  readonly driver = 'fs' as const;
  private readonly tmp: string;
  private readonly syncBytes: number;

  constructor(
    private readonly root: string,
    opts: { syncBytes?: number } = {},
  ) {
    this.root = path.resolve(root);
    this.tmp = path.join(this.root, '.tmp');
    this.syncBytes = opts.syncBytes ?? FS_SYNC_BYTES;
  }

  private file(key: string): string {
    assertSafeKey(key);
    const p = path.join(this.root, key);
    if (!p.startsWith(this.root + path.sep)) throw new AppError('bad_request', 'Invalid object path');
    return p;
  }

  async putContentAddressed(
    prefix: string,
    body: Readable,
    opts: { contentType?: string; maxBytes?: number } = {},
  ): Promise<PutResult> {
    await mkdir(this.tmp, { recursive: true });
    const tmpFile = path.join(this.tmp, randomUUID());
    const h = hashingLimiter(opts.maxBytes);
    try {
      await pipeline(body, h.stream, createWriteStream(tmpFile));
      const { size, sha256 } = h.result();
      const key = `${prefix}/${sha256}`;
      const dest = this.file(key);
      const exists = await stat(dest).then(
        () => true,
        () => false,
      );
      if (exists) {
        await rm(tmpFile, { force: true });
        return { key, size, sha256, created: false };
      }
      await mkdir(path.dirname(dest), { recursive: true });
      await rename(tmpFile, dest);
      if (opts.contentType) await writeFile(`${dest}.meta`, JSON.stringify({ contentType: opts.contentType }));
      return { key, size, sha256, created: true };
    } catch (e) {
      await rm(tmpFile, { force: true });
      throw e;
    }
  }

  async put(key: string, body: Readable | Buffer, opts: { contentType?: string } = {}): Promise<PutResult> {
    const dest = this.file(key);
    const tmpFile = path.join(this.tmp, randomUUID());
    let written: { size: number; sha256: string };
    try {
      if (Buffer.isBuffer(body) && body.length <= this.syncBytes) {
        // A small derived object (a thumbnail): staged and moved into place by synchronous calls.
        inDir(this.tmp, () => writeFileSync(tmpFile, body));
        written = { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
        inDir(path.dirname(dest), () => renameSync(tmpFile, dest));
      } else {
        if (Buffer.isBuffer(body)) {
          await this.inTmp(() => writeFile(tmpFile, body));
          written = { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
        } else {
          await mkdir(this.tmp, { recursive: true });
          const h = hashingLimiter();
          await pipeline(body, h.stream, createWriteStream(tmpFile));
          written = h.result();
        }
        await moveInto(tmpFile, dest);
      }
    } catch (e) {
      await rm(tmpFile, { force: true });
      throw e;
    }
    // A type the key implies (a thumbnail's) is not written beside it: three file calls less a thumbnail.
    if (opts.contentType && opts.contentType !== layout.impliedContentType(key))
      await writeFile(`${dest}.meta`, JSON.stringify({ contentType: opts.contentType }));
    return { key, ...written, created: true };
  }

  async read(key: string, maxBytes: number, into?: (size: number) => Buffer): Promise<Buffer> {
    const file = this.file(key);
    // Opened and sized synchronously: an object up to syncBytes is then read the same way; a larger one
    // by the libuv threads, from a handle of its own (the first descriptor closed meanwhile).
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (e) {
      throw absent(e);
    }
    let buf: Buffer;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new AppError('file_not_found');
      if (st.size > maxBytes)
        throw new AppError('payload_too_large', `The object exceeds the limit of ${maxBytes} bytes`);
      buf = into?.(st.size) ?? Buffer.allocUnsafe(st.size);
      if (st.size <= this.syncBytes) {
        let filled = 0;
        while (filled < st.size) {
          const n = readSync(fd, buf, filled, st.size - filled, filled);
          if (!n) break;
          filled += n;
        }
        return filled === buf.length ? buf : buf.subarray(0, filled);
      }
    } finally {
      closeSync(fd);
    }
    const handle = await open(file, 'r').catch((e: unknown) => Promise.reject(absent(e)));
    try {
      let filled = 0;
      while (filled < buf.length) {
        const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
        if (!bytesRead) break;
        filled += bytesRead;
      }
      return filled === buf.length ? buf : buf.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  async localFile(key: string, maxBytes: number): Promise<string> {
    const f = this.file(key);
    const st = await stat(f).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' || e.code === 'ENOTDIR' ? new AppError('file_not_found') : e;
    });
    if (!st.isFile()) throw new AppError('file_not_found');
    if (st.size > maxBytes)
      throw new AppError('payload_too_large', `The object exceeds the limit of ${maxBytes} bytes`);
    return f;
  }

  /** Runs a write into the staging directory, creating it first if it went missing. */
  private async inTmp(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      await mkdir(this.tmp, { recursive: true });
      await write();
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const f = this.file(key);
    const st = await stat(f).catch(() => null);
    if (!st?.isFile()) return null;
    const meta = await readFile(`${f}.meta`, 'utf8').then(
      (s) => JSON.parse(s) as { contentType?: string },
      () => ({}) as { contentType?: string },
    );
    const etag = contentEtag(key) ?? `${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}`;
    const contentType = meta.contentType ?? layout.impliedContentType(key);
    return { key, size: st.size, etag, contentType, lastModified: st.mtime };
  }

  async get(key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable }> {
    const info = await this.head(key);
    if (!info) throw new AppError('file_not_found');
    if (range && (range.start > range.end || range.end >= info.size)) throw new AppError('range_not_satisfiable');
    const body = createReadStream(this.file(key), range ? { start: range.start, end: range.end } : {});
    return { info, body };
  }

  async delete(key: string): Promise<void> {
    const f = this.file(key);
    await rm(f, { force: true });
    await rm(`${f}.meta`, { force: true });
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root);
  }
}

/** A missing file (or a path through a file) as file_not_found; another error as it is. */
function absent(e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' ? new AppError('file_not_found') : e;
}

/** Runs a synchronous write into `dir`, creating the directory first if it is missing. */
function inDir(dir: string, write: () => void): void {
  try {
    write();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dir, { recursive: true });
    write();
  }
}

/** Renames a staged file into place, creating the destination's directory only when it is missing. */
async function moveInto(tmpFile: string, dest: string): Promise<void> {
  try {
    await rename(tmpFile, dest);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await mkdir(path.dirname(dest), { recursive: true });
    await rename(tmpFile, dest);
  }
}
