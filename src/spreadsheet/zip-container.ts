import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import { isAppError } from '../kernel/errors.js';
import { rejected, type RangeReader, type SpreadsheetLimits } from './limits.js';

/**
 * The zip container of an xlsx, read by yauzl over ranged reads of the stored file (no temporary
 * file, nothing read whole): its central directory is checked against the limits before any entry is
 * inflated, then each part is inflated from one ranged read as the caller consumes it.
 */

/** One part (zip entry) of the container, as its central directory declares it. */
export interface ZipPart {
  readonly name: string;
  /** Declared compressed size. */
  readonly compressed: number;
  /** Declared uncompressed size (inflating past it fails). */
  readonly uncompressed: number;
}

/** What the central directory says, and the way to each part's bytes. */
export interface ZipContainer {
  entries: number;
  /** Declared uncompressed size of all entries. */
  uncompressed: number;
  /** Parts by name, in directory order (the first of a repeated name). */
  parts: ReadonlyMap<string, ZipPart>;
  /** A part's bytes, inflated, as they stream; fails past the size the directory declared. */
  open(part: ZipPart): Promise<AsyncIterable<Buffer>>;
}

/** A central directory larger than this is refused (about 30,000 entries; the entry limit is far below). */
const MAX_CENTRAL_DIRECTORY = 4 * 1024 * 1024;
/** What yauzl reads first: the end-of-central-directory record with the largest comment and the ZIP64 locator. */
const TAIL = 22 + 20 + 0xffff;

/**
 * yauzl's access to the file: ranges of the stored object. While the directory is read, the reads are
 * served from at most two ranged reads (the tail, then the directory below it, when it does not lie in
 * the tail), as yauzl reads each directory entry in two small reads; afterwards only the directory
 * stays cached, so a part's local header and its data are each one read of the store.
 */
class RangeAccess extends yauzl.RandomAccessReader {
  /** Bytes read during the directory phase, from `start` to the end of the file. */
  private cache: { start: number; bytes: Buffer } | undefined;
  /** Where the directory starts: the lowest read after the tail's. */
  private directoryStart = Infinity;
  private directoryRead = false;

  constructor(
    private readonly range: RangeReader,
    private readonly size: number,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    this.range(start, end - 1).then(
      (body) => {
        body.on('error', (e) => out.destroy(e));
        out.on('close', () => body.destroy());
        body.pipe(out);
      },
      (e: unknown) => out.destroy(e as Error),
    );
    return out;
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void,
  ): void {
    if (position < 0 || position + length > this.size) {
      setImmediate(callback, new Error('a read past the end of the file'));
      return;
    }
    const cache = this.cache;
    if (!this.directoryRead && cache) this.directoryStart = Math.min(this.directoryStart, position);
    if (cache && position >= cache.start && position + length <= cache.start + cache.bytes.length) {
      cache.bytes.copy(buffer, offset, position - cache.start, position - cache.start + length);
      setImmediate(callback, null);
      return;
    }
    if (this.directoryRead) {
      super.read(buffer, offset, length, position, callback);
      return;
    }
    // The directory phase. The first read is the tail; a read below the cache is the directory's start
    // (or the ZIP64 record), read up to the cache in one range.
    const end = cache ? cache.start : this.size;
    if (end - position > MAX_CENTRAL_DIRECTORY + TAIL) {
      setImmediate(callback, rejected('The workbook directory is malformed'));
      return;
    }
    const fetched = Buffer.allocUnsafe(end - position);
    super.read(fetched, 0, fetched.length, position, (err) => {
      if (err) return callback(err);
      const bytes = cache ? Buffer.concat([fetched, cache.bytes]) : fetched;
      this.cache = { start: position, bytes };
      bytes.copy(buffer, offset, 0, length);
      callback(null);
    });
  }

  /** The directory is read: only its own bytes stay cached (a part's local header is read from the store). */
  directoryDone(): void {
    this.directoryRead = true;
    const cache = this.cache;
    if (!cache) return;
    if (this.directoryStart === Infinity) this.cache = undefined;
    else if (this.directoryStart > cache.start)
      this.cache = { start: this.directoryStart, bytes: cache.bytes.subarray(this.directoryStart - cache.start) };
  }
}

class Part implements ZipPart {
  constructor(readonly entry: yauzl.Entry) {}
  get name() {
    return this.entry.fileName;
  }
  get compressed() {
    return this.entry.compressedSize;
  }
  get uncompressed() {
    return this.entry.uncompressedSize;
  }
}

/**
 * Failures of the file itself (a malformed directory, corrupt deflate data, a part longer or shorter
 * than declared) are final; system errors of the storage stream (a connection reset) stay as they are
 * so the job retries them.
 */
export function unreadable(e: unknown): unknown {
  if (isAppError(e)) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && /^E[A-Z]/.test(code)) return e;
  return rejected(`The workbook could not be read: ${(e as Error)?.message ?? 'unknown error'}`, e);
}

/**
 * Opens the container of an xlsx: reads its central directory through yauzl, then refuses too many
 * entries, a declared total size past the limit, or an entry whose compression ratio betrays a zip
 * bomb, before any entry is inflated.
 */
export async function openZipContainer(
  read: RangeReader,
  size: number,
  limits: SpreadsheetLimits,
): Promise<ZipContainer> {
  if (size < 22) throw rejected('The file is not an xlsx workbook');
  if (size > limits.maxFileBytes) throw rejected(`The spreadsheet exceeds ${limits.maxFileBytes} bytes`);
  const access = new RangeAccess(read, size);
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(access, size, { autoClose: false, strictFileNames: false });
  } catch (e) {
    throw unreadable(e);
  }
  if (zip.entryCount > limits.maxZipEntries)
    throw rejected(`The workbook has ${zip.entryCount} parts (limit ${limits.maxZipEntries})`);
  const parts = new Map<string, Part>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      total += entry.uncompressedSize;
      if (!parts.has(entry.fileName)) parts.set(entry.fileName, new Part(entry));
      if (
        entry.uncompressedSize > 1024 * 1024 &&
        entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxCompressionRatio
      )
        throw rejected('A workbook part is compressed beyond the allowed ratio (zip bomb)');
    }
  } catch (e) {
    throw unreadable(e);
  }
  access.directoryDone();
  if (total > limits.maxUncompressedBytes)
    throw rejected(`The workbook unpacks to more than ${limits.maxUncompressedBytes} bytes`);
  return {
    entries: zip.entryCount,
    uncompressed: total,
    parts,
    open: (part) => openPart(zip, part as Part),
  };
}

/**
 * A part's inflated bytes. The local header is read first (awaited here, so the reads of a part belong
 * to its caller's asynchronous stack), then the data as one ranged read; yauzl fails the stream when
 * the part inflates to more or fewer bytes than declared.
 */
async function openPart(zip: yauzl.ZipFile, part: Part): Promise<AsyncIterable<Buffer>> {
  const { entry } = part;
  if (entry.isEncrypted()) throw rejected('Encrypted workbooks are not accepted');
  if (!entry.canDecodeFileData())
    throw rejected(`A workbook part uses compression method ${entry.compressionMethod}, which is not supported`);
  let stream: Readable;
  try {
    const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
    stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStreamLowLevel(
        fileDataStart,
        entry.compressedSize,
        0,
        entry.compressedSize,
        entry.compressionMethod === 8,
        entry.uncompressedSize,
        (err, s) => (err ? reject(err) : resolve(s)),
      ),
    );
  } catch (e) {
    throw unreadable(e);
  }
  return chunks(stream);
}

async function* chunks(stream: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (e) {
    throw unreadable(e);
  } finally {
    stream.destroy();
  }
}
