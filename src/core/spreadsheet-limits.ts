import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
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
}

export const DEFAULT_SPREADSHEET_LIMITS: SpreadsheetLimits = {
  maxFileBytes: 25 * 1024 * 1024,
  maxRows: 200_000,
  maxColumns: 50,
  maxZipEntries: 2_000,
  maxUncompressedBytes: 512 * 1024 * 1024,
  maxCompressionRatio: 150,
};

/** Reads an inclusive byte range of the stored spreadsheet (the object store's ranged get). */
export type RangeReader = (start: number, end: number) => Promise<Readable>;

const EOCD_SIG = 0x06054b50;
const CDH_SIG = 0x02014b50;
const MAX_CENTRAL_DIRECTORY = 4 * 1024 * 1024;

async function bytes(read: RangeReader, start: number, end: number): Promise<Buffer> {
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
): Promise<{ entries: number; uncompressed: number; worksheet?: ZipEntry }> {
  if (size < 22) throw reject('The file is not an xlsx workbook');
  if (size > limits.maxFileBytes) throw reject(`The spreadsheet exceeds ${limits.maxFileBytes} bytes`);
  const tailStart = Math.max(0, size - 65_557);
  const tail = await bytes(read, tailStart, size - 1);
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
  const cd = await bytes(read, cdOffset, cdOffset + cdSize - 1);
  let total = 0;
  let p = 0;
  let worksheet: ZipEntry | undefined;
  for (let n = 0; n < count; n++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CDH_SIG) throw reject('The workbook directory is malformed');
    const compressed = cd.readUInt32LE(p + 20);
    const uncompressed = cd.readUInt32LE(p + 24);
    total += uncompressed;
    const name = cd.subarray(p + 46, p + 46 + cd.readUInt16LE(p + 28)).toString('latin1');
    // The first worksheet in the container is the one the reader streams (readPendingUserSheetChunks).
    if (!worksheet && /^xl\/worksheets\/sheet\d+\.xml$/.test(name))
      worksheet = { method: cd.readUInt16LE(p + 10), compressed, uncompressed, localHeader: cd.readUInt32LE(p + 42) };
    if (uncompressed > 1024 * 1024 && uncompressed / Math.max(compressed, 1) > limits.maxCompressionRatio) {
      throw reject('A workbook part is compressed beyond the allowed ratio (zip bomb)');
    }
    p += 46 + cd.readUInt16LE(p + 28) + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32);
  }
  if (total > limits.maxUncompressedBytes)
    throw reject(`The workbook unpacks to more than ${limits.maxUncompressedBytes} bytes`);
  return { entries: count, uncompressed: total, ...(worksheet ? { worksheet } : {}) };
}

/** Where a zip entry lives (from the central directory). */
export interface ZipEntry {
  /** 0 stored, 8 deflated. */
  method: number;
  compressed: number;
  uncompressed: number;
  localHeader: number;
}

/**
 * Counts the rows of a worksheet part without parsing it: inflates the entry and counts its `<row`
 * elements (a fraction of the parse's cost), so a running import can say "rows done of total". Stops,
 * answering undefined, past the declared size or for a compression method it does not know: the count
 * is a progress figure, never a reason to refuse the file.
 */
export async function countWorksheetRows(read: RangeReader, entry: ZipEntry): Promise<number | undefined> {
  if (entry.method !== 0 && entry.method !== 8) return undefined;
  const local = await bytes(read, entry.localHeader, entry.localHeader + 29);
  if (local.length < 30 || local.readUInt32LE(0) !== 0x04034b50) return undefined;
  const start = entry.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (entry.compressed === 0) return 0;
  const raw = await read(start, start + entry.compressed - 1);
  const xml = entry.method === 8 ? raw.pipe(createInflateRaw()) : raw;
  try {
    return await countRowTags(xml, entry.uncompressed);
  } finally {
    raw.destroy();
  }
}

/** Counts `<row` elements (any namespace prefix) in XML chunks, a tag split across chunks once; undefined past `limit` bytes. */
export async function countRowTags(xml: AsyncIterable<Buffer | string>, limit: number): Promise<number | undefined> {
  let rows = 0;
  let seen = 0;
  let carry = '';
  for await (const chunk of xml) {
    const part = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    seen += part.length;
    if (seen > limit) return undefined;
    const text = carry + part;
    rows += text.match(ROW)?.length ?? 0;
    // A tag split across chunks: keep a short tail that could start one and was not counted.
    const cut = text.lastIndexOf('<');
    carry = cut >= 0 && text.length - cut < 16 && !ROW_AT_END.test(text.slice(cut)) ? text.slice(cut) : '';
  }
  return rows;
}

const ROW = /<(?:[A-Za-z_][\w.-]*:)?row[\s>\/]/g;
const ROW_AT_END = /^<(?:[A-Za-z_][\w.-]*:)?row[\s>\/]/;
