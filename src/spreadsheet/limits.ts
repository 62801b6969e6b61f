import type { Readable } from 'node:stream';
import { AppError } from '../kernel/errors.js';

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

/** The coded refusal of a spreadsheet: 422 `spreadsheet_rejected`, never retried. */
export const rejected = (message: string, cause?: unknown) =>
  new AppError('spreadsheet_rejected', message.slice(0, 300), cause === undefined ? undefined : { cause });
