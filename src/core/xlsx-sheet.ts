import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createInflateRaw } from 'node:zlib';
import { AppError, isAppError } from './errors.js';
import { attribute, attributes, XmlScanner, type XmlHandler } from './xml-scan.js';
import {
  inspectXlsxContainer,
  readRange,
  type RangeReader,
  type SpreadsheetLimits,
  type ZipEntry,
} from './spreadsheet-limits.js';

/**
 * Reads the first worksheet of an xlsx as rows of cell texts, straight from the zip entries the
 * central directory located (ranged reads, no temporary file), with the XML scanner of xml-scan.ts.
 *
 * Cell texts follow what a spreadsheet shows for the cell's stored value: shared and inline strings
 * (rich text joined, phonetic runs left out, `_xHHHH_` escapes decoded), formula results, numbers as
 * JavaScript prints them, booleans as `true`/`false`, ISO dates (`t="d"`) as written, errors as empty.
 * Bytes are decoded as one UTF-8 stream, so a character split between two inflated chunks stays whole.
 */

/** One row of the sheet: its 1-based number and its cell texts by 1-based column (sparse). */
export interface SheetCells {
  number: number;
  /** Texts by column number; index 0 and columns without a value are absent. */
  cells: string[];
  /** The highest column holding a value (0 when the row is empty). */
  width: number;
}

/** Where the first worksheet and the shared strings live in the container. */
export interface WorkbookParts {
  sheet: ZipEntry;
  sharedStrings?: ZipEntry;
}

const reject = (message: string) => new AppError('spreadsheet_rejected', message);

/** The local name of an element or attribute (`x:row` → `row`). */
const local = (name: string) => {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
};

/** An entry's bytes, inflated, as a stream that fails past the size the directory declared. */
export async function entryStream(read: RangeReader, entry: ZipEntry): Promise<AsyncIterable<Buffer>> {
  if (entry.flags !== undefined && entry.flags & 1) throw reject('Encrypted workbooks are not accepted');
  if (entry.method !== 0 && entry.method !== 8)
    throw reject(`A workbook part uses compression method ${entry.method}, which is not supported`);
  const head = await readRange(read, entry.localHeader, entry.localHeader + 29);
  if (head.length < 30 || head.readUInt32LE(0) !== 0x04034b50) throw reject('The workbook directory is malformed');
  const start = entry.localHeader + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  if (entry.compressed === 0) return (async function* () {})();
  const raw = await read(start, start + entry.compressed - 1);
  if (entry.method === 0) return bounded(raw, raw, entry.uncompressed);
  const inflate = createInflateRaw();
  raw.on('error', (e) => inflate.destroy(e)); // a storage failure ends the inflation too
  return bounded(raw.pipe(inflate), raw, entry.uncompressed);
}

async function* bounded(xml: Readable, raw: Readable, limit: number): AsyncGenerator<Buffer> {
  let seen = 0;
  try {
    for await (const chunk of xml) {
      seen += (chunk as Buffer).length;
      if (seen > limit) throw reject('A workbook part unpacks to more than its declared size');
      yield chunk as Buffer;
    }
  } catch (e) {
    throw unreadable(e);
  } finally {
    raw.destroy();
    xml.destroy();
  }
}

/**
 * Failures of the file itself (corrupt deflate data) are final; system errors of the storage stream
 * (a connection reset) stay as they are so the job retries them.
 */
function unreadable(e: unknown): unknown {
  if (isAppError(e)) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && /^E[A-Z]/.test(code)) return e;
  return new AppError(
    'spreadsheet_rejected',
    `The workbook could not be read: ${(e as Error)?.message ?? 'unknown error'}`.slice(0, 300),
    { cause: e },
  );
}

/**
 * Feeds XML chunks to the scanner, decoding UTF-8 across chunk boundaries, and yields after each
 * chunk so the caller can hand on what the handler collected. Malformed XML, or a handler refusing
 * what it saw, rejects the file.
 */
async function* parseXml(chunks: AsyncIterable<Buffer>, handler: XmlHandler): AsyncGenerator<void> {
  const decoder = new StringDecoder('utf8');
  const scanner = new XmlScanner(handler);
  const feed = (text: string, last: boolean) => {
    try {
      scanner.write(text);
      if (last) scanner.end();
    } catch (e) {
      throw reject(`The workbook could not be read: ${(e as Error).message}`.slice(0, 300));
    }
  };
  for await (const chunk of chunks) {
    feed(decoder.write(chunk), false);
    yield;
  }
  feed(decoder.end(), true);
}

async function drain(parsing: AsyncIterable<void>): Promise<void> {
  for await (const _ of parsing);
}

/** All attributes of the elements named `name` (local name), in document order. */
async function elements(chunks: AsyncIterable<Buffer>, name: string): Promise<Record<string, string>[]> {
  const found: Record<string, string>[] = [];
  await drain(
    parseXml(chunks, {
      capturing: false,
      open: (tag, attrs) => {
        if (local(tag) === name) found.push(attributes(attrs));
      },
      close: () => undefined,
      text: () => undefined,
    }),
  );
  return found;
}

/** Resolves a relationship's target against the workbook's folder (`xl/`), as OPC part names. */
function partName(target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `xl/${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.' && p !== '') out.push(p);
  }
  return out.join('/');
}

/**
 * The first worksheet in the workbook's tab order (xl/workbook.xml and its relationships) and the
 * shared strings part. A container without those parts falls back to the first `xl/worksheets/sheetN.xml`
 * in directory order and `xl/sharedStrings.xml`.
 */
export async function locateWorkbookParts(
  read: RangeReader,
  entries: ReadonlyMap<string, ZipEntry>,
): Promise<WorkbookParts> {
  const workbook = entries.get('xl/workbook.xml');
  const rels = entries.get('xl/_rels/workbook.xml.rels');
  let sheet: ZipEntry | undefined;
  let sharedStrings = entries.get('xl/sharedStrings.xml');
  if (workbook && rels && workbook.uncompressed <= PART_LIMIT && rels.uncompressed <= PART_LIMIT) {
    const targets = new Map<string, { type: string; target: string }>();
    for (const r of await elements(await entryStream(read, rels), 'Relationship'))
      if (r.Id && r.Target && r.TargetMode !== 'External')
        targets.set(r.Id, { type: r.Type ?? '', target: partName(r.Target) });
    for (const t of targets.values())
      if (t.type.endsWith('/sharedStrings') && entries.has(t.target)) sharedStrings = entries.get(t.target);
    const sheets = await elements(await entryStream(read, workbook), 'sheet');
    const first = sheets[0] && Object.entries(sheets[0]).find(([k]) => local(k) === 'id' && k !== 'id')?.[1];
    const target = first !== undefined ? targets.get(first) : undefined;
    if (target) sheet = entries.get(target.target);
  }
  if (!sheet)
    for (const [name, entry] of entries)
      if (/^xl\/worksheets\/sheet\d+\.xml$/.test(name)) {
        sheet = entry;
        break;
      }
  if (!sheet) throw reject('The workbook has no worksheet');
  return { sheet, ...(sharedStrings ? { sharedStrings } : {}) };
}

/** Checks the container against the limits (nothing inflated yet), then locates its parts. */
export async function openWorkbook(read: RangeReader, size: number, limits: SpreadsheetLimits): Promise<WorkbookParts> {
  const container = await inspectXlsxContainer(read, size, limits);
  return locateWorkbookParts(read, container.parts);
}

/** Workbook and relationship parts past this size are not read (they are a few KiB in practice). */
const PART_LIMIT = 4 * 1024 * 1024;

/** `_x000D_` and the like: how xlsx escapes characters XML cannot carry; `_x005F_` escapes the underscore. */
const ESCAPED = /_x([0-9A-Fa-f]{4})_/g;
const unescapeText = (s: string) =>
  s.includes('_x') ? s.replace(ESCAPED, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : s;

/**
 * Collects the text of string items (`si` in the shared strings, `is` in a cell): the `t` elements
 * directly inside, or inside runs (`r`), joined; phonetic runs (`rPh`) are left out.
 */
class StringItem {
  private phonetic = 0;
  inText = false;
  text = '';
  open(name: string): void {
    if (name === 'rPh') this.phonetic++;
    else if (name === 't' && this.phonetic === 0) this.inText = true;
  }
  close(name: string): void {
    if (name === 'rPh') this.phonetic--;
    else if (name === 't') this.inText = false;
  }
  add(text: string): void {
    if (this.inText) this.text += text;
  }
}

/** The shared strings table, in order; its part's size is bounded by the caller's limit. */
export async function readSharedStrings(chunks: AsyncIterable<Buffer>): Promise<string[]> {
  const strings: string[] = [];
  let item: StringItem | undefined;
  const handler: XmlHandler = {
    capturing: false,
    open(tag) {
      const name = local(tag);
      if (item) item.open(name);
      else if (name === 'si') item = new StringItem();
      handler.capturing = item?.inText ?? false;
    },
    close(tag) {
      if (!item) return;
      const name = local(tag);
      if (name === 'si') {
        strings.push(unescapeText(item.text));
        item = undefined;
      } else item.close(name);
      handler.capturing = item?.inText ?? false;
    },
    text(t) {
      item!.add(t);
    },
  };
  await drain(parseXml(chunks, handler));
  return strings;
}

/** Column number of a cell reference (`AB12` → 28); 0 when it has no letters. */
function columnOf(ref: string): number {
  let col = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c >= 65 && c <= 90) col = col * 26 + (c - 64);
    else if (c >= 97 && c <= 122) col = col * 26 + (c - 96);
    else break;
  }
  return col;
}

/**
 * Streams the rows of a worksheet part in the groups one inflated chunk holds (hundreds of rows),
 * with the cell texts resolved against `sharedStrings`.
 */
export async function* readSheetRows(
  chunks: AsyncIterable<Buffer>,
  sharedStrings: readonly string[],
): AsyncGenerator<SheetCells[]> {
  let out: SheetCells[] = [];
  let inData = false;
  let row: SheetCells | undefined;
  let lastRow = 0;
  let col = 0;
  let type: string | undefined;
  let value: string | undefined;
  let inValue = false;
  let inline: StringItem | undefined;
  const handler: XmlHandler = {
    capturing: false,
    open(tag, attrs) {
      const name = local(tag);
      if (inline) {
        inline.open(name);
        handler.capturing = inline.inText;
        return;
      }
      if (!row) {
        if (name === 'sheetData') inData = true;
        else if (name === 'row' && inData) {
          const r = attribute(attrs, 'r');
          lastRow = r !== undefined ? parseInt(r, 10) : lastRow + 1;
          if (!(lastRow > 0)) throw new Error(`a row has the number "${r}"`);
          row = { number: lastRow, cells: [], width: 0 };
          col = 0;
        }
        return;
      }
      if (name === 'c') {
        const ref = attribute(attrs, 'r');
        col = ref !== undefined ? columnOf(ref) : col + 1;
        if (col === 0) throw new Error(`a cell has the reference "${ref}"`);
        type = attribute(attrs, 't');
        value = undefined;
      } else if (name === 'v') {
        inValue = handler.capturing = true;
        value = '';
      } else if (name === 'is') inline = new StringItem();
    },
    close(tag) {
      const name = local(tag);
      if (inline) {
        if (name !== 'is') {
          inline.close(name);
          handler.capturing = inline.inText;
          return;
        }
        value = inline.text;
        inline = undefined;
        handler.capturing = false;
        return;
      }
      if (!row) {
        if (name === 'sheetData') inData = false;
        return;
      }
      if (name === 'v') inValue = handler.capturing = false;
      else if (name === 'c') {
        const text = value === undefined ? undefined : cellText(type, value, sharedStrings);
        if (text !== undefined) {
          row.cells[col] = text;
          if (col > row.width) row.width = col;
        }
      } else if (name === 'row') {
        out.push(row);
        row = undefined;
      }
    },
    text(t) {
      if (inValue) value += t;
      else inline?.add(t);
    },
  };
  for await (const _ of parseXml(chunks, handler)) {
    if (!out.length) continue;
    yield out;
    out = [];
  }
  if (out.length) yield out;
}

/** A cell's text from its type and stored value (a formula's cached result is typed like any value). */
function cellText(type: string | undefined, value: string, shared: readonly string[]): string {
  switch (type) {
    case 's':
      return shared[parseInt(value, 10)] ?? '';
    case 'str':
    case 'inlineStr':
      return unescapeText(value);
    case 'b':
      return value.trim() === '' ? '' : String(parseInt(value, 10) !== 0);
    case 'e':
      return '';
    case 'd':
      return value;
    default: {
      if (value.trim() === '') return '';
      return String(parseFloat(value));
    }
  }
}

/**
 * Counts the rows of a worksheet part without parsing it: inflates the entry and counts its `<row`
 * elements (a fraction of the parse's cost), so a running import can say "rows done of total".
 * Answers undefined for a part it cannot inflate (past its declared size, an unknown compression
 * method): the count is a progress figure, never a reason to refuse the file.
 */
export async function countWorksheetRows(read: RangeReader, entry: ZipEntry): Promise<number | undefined> {
  try {
    return await countRowTags(await entryStream(read, entry), Infinity);
  } catch (e) {
    if (isAppError(e)) return undefined;
    throw e;
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
