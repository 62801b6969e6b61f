/**
 * Baseline of B8: exceljs's streaming WorkbookReader reading the same spreadsheet alone, with the
 * product's reader options, touching every cell's value; in its own process so its peak RSS is its own.
 */
import { createReadStream } from 'node:fs';
import ExcelJS from 'exceljs';
import type { Hosted } from '../harness/host.js';

async function read(file: string): Promise<{ rows: number; cells: number; elapsedMs: number }> {
  const t0 = performance.now();
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(createReadStream(file), {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
    entries: 'emit',
  });
  let rows = 0;
  let cells = 0;
  for await (const sheet of reader) {
    for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
      rows++;
      for (const v of row.values as unknown[]) if (v !== undefined && v !== null && String(v).length) cells++;
    }
    break;
  }
  return { rows: rows - 1, cells, elapsedMs: performance.now() - t0 };
}

export async function start(): Promise<Hosted> {
  return { info: {}, calls: { read: (a: { file: string }) => read(a.file) }, stop: async () => undefined };
}
