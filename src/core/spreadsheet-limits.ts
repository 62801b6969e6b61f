import type { Readable } from 'node:stream';
import { AppError } from './errors.js';

/** Bounds on an uploaded spreadsheet (decompression and parsing bombs); docs/media.md lists them. */
export interface SpreadsheetLimits {
  /** Encoded upload size. */
  maxFileBytes: number;
  /** Data rows of the first worksheet (the header row excluded). */
  maxRows: number;
  /** Columns of any row. */
  maxColumns: number;
  /** Entries in the xlsx zip container. */
  maxZipEntries: number;
  /** Declared uncompressed size of all entries together. */
  maxUncompressedBytes: number;
  /** Declared uncompressed/compressed ratio of any large entry. */
  maxCompressionRatio: number;
  /** Declared uncompressed size of the shared strings part (the table is held while the sheet is read). */
  maxSharedStringsBytes: number;
}

export const DEFAULT_SPREADSHEET_LIMITS: SpreadsheetLimits = {
  maxFileBytes: 25 * 1024 * 1024,
  maxRows: 200_000,
  maxColumns: 50,
  maxZipEntries: 2_000,
  maxUncompressedBytes: 512 * 1024 * 1024,
  maxCompressionRatio: 150,
  maxSharedStringsBytes: 64 * 1024 * 1024,
};

/** Reads an inclusive byte range of the stored spreadsheet (the object store's ranged get). */
export type RangeReader = (start: number, end: number) => Promise<Readable>;

const EOCD_SIG = 0x06054b50;
const CDH_SIG = 0x02014b50;
const MAX_CENTRAL_DIRECTORY = 4 * 1024 * 1024;

/** The bytes of an inclusive range, gathered. */
export async function readRange(read: RangeReader, start: number, end: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await read(start, end)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const reject = (message: string) => new AppError('spreadsheet_rejected', message);

/**
 * Checks the zip container of an xlsx before any entry is inflated: reads only the end-of-central-
 * directory record and the central directory (two ranged reads), then refuses too many entries, a
 * declared total size past the limit, or an entry whose compression ratio betrays a zip bomb.
 */
export async function inspectXlsxContainer(
  read: RangeReader,
  size: number,
  limits: SpreadsheetLimits,
): Promise<XlsxContainer> {
  if (size < 22) throw reject('The file is not an xlsx workbook');
  if (size > limits.maxFileBytes) throw reject(`The spreadsheet exceeds ${limits.maxFileBytes} bytes`);
  const tailStart = Math.max(0, size - 65_557);
  const tail = await readRange(read, tailStart, size - 1);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (tail.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  if (eocd < 0) throw reject('The file is not an xlsx workbook (no zip directory)');
  const count = tail.readUInt16LE(eocd + 10);
  const cdSize = tail.readUInt32LE(eocd + 12);
  const cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)
    throw reject('ZIP64 workbooks are not accepted');
  if (count > limits.maxZipEntries) throw reject(`The workbook has ${count} parts (limit ${limits.maxZipEntries})`);
  if (cdSize > MAX_CENTRAL_DIRECTORY || cdOffset + cdSize > size) throw reject('The workbook directory is malformed');
  const cd = await readRange(read, cdOffset, cdOffset + cdSize - 1);
  let total = 0;
  let p = 0;
  const parts = new Map<string, ZipEntry>();
  for (let n = 0; n < count; n++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CDH_SIG) throw reject('The workbook directory is malformed');
    const compressed = cd.readUInt32LE(p + 20);
    const uncompressed = cd.readUInt32LE(p + 24);
    total += uncompressed;
    // Part names are ASCII in practice; bit 11 of the flags says UTF-8.
    const flags = cd.readUInt16LE(p + 8);
    const name = cd.subarray(p + 46, p + 46 + cd.readUInt16LE(p + 28)).toString(flags & 0x800 ? 'utf8' : 'latin1');
    if (!parts.has(name))
      parts.set(name, {
        method: cd.readUInt16LE(p + 10),
        flags,
        compressed,
        uncompressed,
        localHeader: cd.readUInt32LE(p + 42),
      });
    if (uncompressed > 1024 * 1024 && uncompressed / Math.max(compressed, 1) > limits.maxCompressionRatio) {
      throw reject('A workbook part is compressed beyond the allowed ratio (zip bomb)');
    }
    p += 46 + cd.readUInt16LE(p + 28) + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32);
  }
  if (total > limits.maxUncompressedBytes)
    throw reject(`The workbook unpacks to more than ${limits.maxUncompressedBytes} bytes`);
  return { entries: count, uncompressed: total, parts };
}

/** What the central directory says about an xlsx container. */
export interface XlsxContainer {
  entries: number;
  /** Declared uncompressed size of all entries. */
  uncompressed: number;
  /** Entries by part name, in directory order (the first of a repeated name). */
  parts: ReadonlyMap<string, ZipEntry>;
}

/** Where a zip entry lives (from the central directory). */
export interface ZipEntry {
  /** 0 stored, 8 deflated. */
  method: number;
  /** General-purpose flags (bit 0: encrypted). */
  flags?: number;
  compressed: number;
  uncompressed: number;
  localHeader: number;
}
