import { parseXml, local, readXml, type XmlHandler } from './xml-stream.js';

/**
 * The cell rules of the import: what a worksheet's cells read as. The XML is saxes's (xml-stream.ts);
 * this file decides what text each cell shows, the way a spreadsheet shows its stored value: shared and
 * inline strings (rich text joined, phonetic runs left out, `_xHHHH_` escapes decoded), formula
 * results, numbers as JavaScript prints them, booleans as `true`/`false`, ISO dates (`t="d"`) as
 * written, errors as empty; element names with or without a namespace prefix, rows and cells with or
 * without references (sparse columns kept in place).
 */

/** One row of the sheet: its 1-based number and its cell texts by 1-based column (sparse). */
export interface SheetCells {
  number: number;
  /** Texts by column number; index 0 and columns without a value are absent. */
  cells: string[];
  /** The highest column holding a value (0 when the row is empty). */
  width: number;
}

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
  private inText = false;
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
  await readXml(chunks, {
    open(tag) {
      const name = local(tag);
      if (item) item.open(name);
      else if (name === 'si') item = new StringItem();
    },
    close(tag) {
      if (!item) return;
      const name = local(tag);
      if (name === 'si') {
        strings.push(unescapeText(item.text));
        item = undefined;
      } else item.close(name);
    },
    text(t) {
      item?.add(t);
    },
  });
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
    open(tag, attrs) {
      const name = local(tag);
      if (inline) {
        inline.open(name);
        return;
      }
      if (!row) {
        if (name === 'sheetData') inData = true;
        else if (name === 'row' && inData) {
          const r = attrs.r;
          lastRow = r !== undefined ? parseInt(r, 10) : lastRow + 1;
          if (!(lastRow > 0)) throw new Error(`a row has the number "${r}"`);
          row = { number: lastRow, cells: [], width: 0 };
          col = 0;
        }
        return;
      }
      if (name === 'c') {
        const ref = attrs.r;
        col = ref !== undefined ? columnOf(ref) : col + 1;
        if (col === 0) throw new Error(`a cell has the reference "${ref}"`);
        type = attrs.t;
        value = undefined;
      } else if (name === 'v') {
        inValue = true;
        value = '';
      } else if (name === 'is') inline = new StringItem();
    },
    close(tag) {
      const name = local(tag);
      if (inline) {
        if (name !== 'is') {
          inline.close(name);
          return;
        }
        value = inline.text;
        inline = undefined;
        return;
      }
      if (!row) {
        if (name === 'sheetData') inData = false;
        return;
      }
      if (name === 'v') inValue = false;
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
