import { z } from 'zod';
import { AppError } from '../../kernel/errors.js';
import { readSharedStrings, readSheetRows, type SpreadsheetLimits, type Workbook } from '../../spreadsheet/index.js';

/** One data row of the pending-users sheet, validated; `row` is the sheet's 1-based row number. */
export const PendingUserRow = z.object({
  username: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9._@-]{1,63}$/, 'letters, digits and . _ @ - only, 2 to 64 characters'),
  email: z.union([z.literal('').transform(() => undefined), z.email('not a valid e-mail address')]).optional(),
  displayName: z.string().trim().min(1, 'required').max(200),
  role: z.string().trim().toLowerCase().min(1, 'required').max(64),
});
export type PendingUserRow = z.infer<typeof PendingUserRow>;

export type SheetRow =
  { row: number; ok: true; value: PendingUserRow } | { row: number; ok: false; field: string; message: string };

/** Header spellings accepted for each field (compared lower-case without spaces, dashes or underscores). */
const HEADERS: Record<keyof PendingUserRow, readonly string[]> = {
  username: ['username', 'user', 'login'],
  email: ['email', 'mail', 'emailaddress'],
  displayName: ['displayname', 'name', 'fullname'],
  role: ['role'],
};

const norm = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, '');

type Columns = Partial<Record<keyof PendingUserRow, number>>;

function columnsOf(header: readonly string[]): Columns {
  const cols: Columns = {};
  header.forEach((v, i) => {
    const h = norm(v);
    for (const [field, names] of Object.entries(HEADERS) as [keyof PendingUserRow, readonly string[]][]) {
      if (names.includes(h) && cols[field] === undefined) cols[field] = i;
    }
  });
  const missing = (['username', 'displayName', 'role'] as const).filter((f) => cols[f] === undefined);
  if (missing.length)
    throw new AppError('spreadsheet_rejected', `The header row lacks the column(s): ${missing.join(', ')}`);
  return cols;
}

function toRow(row: number, cells: readonly string[], cols: Columns): SheetRow | undefined {
  const raw: Record<string, string> = {};
  let blank = true;
  for (const f in cols) {
    const v = (cells[cols[f as keyof PendingUserRow]!] ?? '').trim();
    raw[f] = v;
    if (v !== '') blank = false;
  }
  if (blank) return undefined;
  const r = PendingUserRow.safeParse(raw);
  if (r.success) return { row, ok: true, value: r.data };
  const issue = r.error.issues[0]!;
  return { row, ok: false, field: String(issue.path[0] ?? 'row'), message: issue.message };
}

/**
 * Streams the first worksheet of an xlsx (located by `locateWorkbookParts`), yielding validated rows
 * in the groups one inflated chunk of the sheet holds (hundreds of rows): an import of 100,000 rows
 * costs a few hundred turns of the async iteration, not 100,000. The sheet is never held whole; the
 * shared strings are, within `maxSharedStringsBytes`; the limits on rows and columns stop a parsing
 * bomb early. The first non-empty row is the header.
 */
export async function* readPendingUserSheetChunks(
  book: Workbook,
  limits: Pick<SpreadsheetLimits, 'maxRows' | 'maxColumns' | 'maxSharedStringsBytes'>,
): AsyncGenerator<SheetRow[]> {
  let shared: string[] = [];
  if (book.sharedStrings) {
    if (book.sharedStrings.uncompressed > limits.maxSharedStringsBytes)
      throw new AppError(
        'spreadsheet_rejected',
        `The workbook's shared strings unpack to more than ${limits.maxSharedStringsBytes} bytes`,
      );
    shared = await readSharedStrings(await book.open(book.sharedStrings));
  }
  let cols: Columns | undefined;
  let rows = 0;
  for await (const group of readSheetRows(await book.open(book.sheet), shared)) {
    const out: SheetRow[] = [];
    let stop: string | undefined;
    for (const row of group) {
      if (row.width > limits.maxColumns) {
        stop = `Row ${row.number} has more than ${limits.maxColumns} columns`;
        break;
      }
      if (!cols) {
        // Blank rows above the header (a styled first row, a title left empty) are passed over.
        if (row.cells.some((c) => c.trim() !== '')) cols = columnsOf(row.cells);
        continue;
      }
      const parsed = toRow(row.number, row.cells, cols);
      if (!parsed) continue;
      if (++rows > limits.maxRows) {
        stop = `The sheet has more than ${limits.maxRows} rows`;
        break;
      }
      out.push(parsed);
    }
    // Rows read before a limit stopped the sheet are given first: the import keeps and reports them.
    if (out.length) yield out;
    if (stop) throw new AppError('spreadsheet_rejected', stop);
  }
  if (!cols) throw new AppError('spreadsheet_rejected', 'The workbook has no header row');
}
