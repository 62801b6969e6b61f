import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { z } from 'zod';
import { AppError } from './errors.js';
import type { SpreadsheetLimits } from './spreadsheet-limits.js';

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

/** The text of a cell whatever exceljs made of it (rich text, hyperlink, formula result, number, date). */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return v.toISOString();
  const o = v as { richText?: { text: string }[]; text?: unknown; result?: unknown };
  if (Array.isArray(o.richText)) return o.richText.map((r) => r.text).join('');
  if (o.text !== undefined) return cellText(o.text);
  if (o.result !== undefined) return cellText(o.result);
  return '';
}

function columnsOf(header: unknown[]): Partial<Record<keyof PendingUserRow, number>> {
  const cols: Partial<Record<keyof PendingUserRow, number>> = {};
  header.forEach((v, i) => {
    const h = norm(cellText(v));
    for (const [field, names] of Object.entries(HEADERS) as [keyof PendingUserRow, readonly string[]][]) {
      if (names.includes(h) && cols[field] === undefined) cols[field] = i;
    }
  });
  const missing = (['username', 'displayName', 'role'] as const).filter((f) => cols[f] === undefined);
  if (missing.length)
    throw new AppError('spreadsheet_rejected', `The header row lacks the column(s): ${missing.join(', ')}`);
  return cols;
}

function toRow(
  row: number,
  values: unknown[],
  cols: Partial<Record<keyof PendingUserRow, number>>,
): SheetRow | undefined {
  const raw: Record<string, string> = {};
  let blank = true;
  for (const f in cols) {
    const v = cellText(values[cols[f as keyof PendingUserRow]!]).trim();
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
 * Streams the first worksheet of an xlsx, yielding validated rows in the groups exceljs parses them
 * (one per chunk of the sheet's XML, hundreds of rows): an import of 100,000 rows costs a few hundred
 * turns of the async iteration, not 100,000. exceljs's streaming WorkbookReader never holds the
 * sheet; the limits on rows and columns stop a parsing bomb early.
 */
export async function* readPendingUserSheetChunks(
  input: Readable,
  limits: Pick<SpreadsheetLimits, 'maxRows' | 'maxColumns'>,
): AsyncGenerator<SheetRow[]> {
  try {
    yield* readRows(input, limits);
  } catch (e) {
    throw unreadable(e);
  }
}

/** exceljs's worksheet reader yields its parse events in groups; its row iterator flattens them. */
type EventGroups = AsyncIterable<{ eventType: string; value: unknown }[]>;

/**
 * Parser failures (bad zip, malformed XML) are the file's fault and final; system errors of the
 * stream (a storage connection reset) stay as they are so the job retries them.
 */
function unreadable(e: unknown): unknown {
  if (e instanceof AppError) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && /^E[A-Z]/.test(code)) return e;
  return new AppError(
    'spreadsheet_rejected',
    `The workbook could not be read: ${(e as Error)?.message ?? 'unknown error'}`.slice(0, 300),
    { cause: e },
  );
}

async function* readRows(
  input: Readable,
  limits: Pick<SpreadsheetLimits, 'maxRows' | 'maxColumns'>,
): AsyncGenerator<SheetRow[]> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
    entries: 'emit',
  });
  let cols: Partial<Record<keyof PendingUserRow, number>> | undefined;
  let rows = 0;
  for await (const sheet of reader) {
    for await (const events of (sheet as unknown as { parse(): EventGroups }).parse()) {
      const out: SheetRow[] = [];
      let stop: string | undefined;
      for (const { eventType, value } of events) {
        if (eventType !== 'row') continue;
        const row = value as ExcelJS.Row;
        const values = row.values as unknown[];
        if (values.length - 1 > limits.maxColumns) {
          stop = `Row ${row.number} has more than ${limits.maxColumns} columns`;
          break;
        }
        if (!cols) {
          cols = columnsOf(values);
          continue;
        }
        const parsed = toRow(row.number, values, cols);
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
    break;
  }
  if (!cols) throw new AppError('spreadsheet_rejected', 'The workbook has no header row');
}
