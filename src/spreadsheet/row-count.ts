import { isAppError } from '../kernel/errors.js';
import type { Workbook } from './workbook.js';
import type { ZipPart } from './zip-container.js';

/**
 * Counts the rows of a worksheet part without parsing it: inflates the part and counts its `<row`
 * elements (a fraction of the parse's cost), so a running import can say "rows done of total".
 * Answers undefined for a part it cannot inflate (past its declared size, an unknown compression
 * method): the count is a progress figure, never a reason to refuse the file.
 */
export async function countWorksheetRows(book: Pick<Workbook, 'open'>, part: ZipPart): Promise<number | undefined> {
  try {
    return await countRowTags(await book.open(part), Infinity);
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
