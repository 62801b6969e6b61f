import { z } from 'zod';
import type { ImportRecord } from '../../../data/models/pending-user.model.js';

export const ImportParams = z.object({ importId: z.string().uuid('must be an import id') });

const IsoDateTime = z.string().describe('ISO 8601 date-time');

export const ImportStatus = z.object({
  importId: z.string(),
  fileName: z.string(),
  status: z.string().describe('queued, running, completed or failed'),
  rowsTotal: z.number().int(),
  rowsDone: z.number().int(),
  rowsImported: z.number().int(),
  rowErrorCount: z.number().int(),
  rowErrors: z.array(z.object({ row: z.number().int(), field: z.string(), message: z.string() })),
  error: z.string().optional(),
  createdAt: IsoDateTime.optional(),
  startedAt: IsoDateTime.optional(),
  finishedAt: IsoDateTime.optional(),
});

/** An import in the admin's list: its counters without the row-error report. */
export const ImportSummary = ImportStatus.omit({ rowErrors: true });

export function presentImportSummary(r: ImportRecord) {
  const { rowErrors: _omitted, ...rest } = presentImport(r);
  return rest;
}

/** Progress and the per-row error report of a pending-users import. */
export function presentImport(r: ImportRecord) {
  return {
    importId: r.id,
    fileName: r.fileName,
    status: r.status,
    rowsTotal: r.rowsTotal,
    rowsDone: r.rowsDone,
    rowsImported: r.rowsImported,
    rowErrorCount: r.rowErrorCount ?? 0,
    rowErrors: (r.rowErrors ?? []).map((e) => ({ row: e.row, field: e.field, message: e.message })),
    error: r.error ?? undefined,
    createdAt: r.get('createdAt')?.toISOString?.(),
    startedAt: r.startedAt?.toISOString(),
    finishedAt: r.finishedAt?.toISOString(),
  };
}
