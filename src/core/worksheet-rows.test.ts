import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import {
  countRowTags,
  countWorksheetRows,
  inspectXlsxContainer,
  DEFAULT_SPREADSHEET_LIMITS,
} from './spreadsheet-limits.js';
import { xlsx, xlsxOf } from '../../test/support/form.js';

const reader = (file: Buffer) => async (start: number, end: number) => Readable.from([file.subarray(start, end + 1)]);

describe('counting the rows of a worksheet without parsing it', () => {
  it('counts every row of a streamed workbook (header included), as exceljs wrote it', async () => {
    const file = await xlsxOf(['username', 'email', 'display name', 'role'], 12_345, (i) => [
      `user${i}`,
      `user${i}@example.org`,
      `User ${i}`,
      'patient',
    ]);
    const c = await inspectXlsxContainer(reader(file), file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(c.worksheet).toBeDefined();
    expect(await countWorksheetRows(reader(file), c.worksheet!)).toBe(12_346);
  });

  it('counts a small shared-strings workbook too', async () => {
    const file = await xlsx([
      ['username', 'role'],
      ['a', 'patient'],
      ['b', 'clinician'],
    ]);
    const c = await inspectXlsxContainer(reader(file), file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(await countWorksheetRows(reader(file), c.worksheet!)).toBe(3);
  });

  it('counts a tag split across chunks once, whatever the split, with or without a namespace prefix', async () => {
    const xml = '<sheetData><row r="1"><c/></row><x:row r="2"></x:row><row/><rowBreaks/></sheetData>';
    for (let size = 1; size <= xml.length; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < xml.length; i += size) chunks.push(xml.slice(i, i + size));
      expect({ size, rows: await countRowTags(Readable.from(chunks), 10_000) }).toEqual({ size, rows: 3 });
    }
  });

  it('gives up past the declared size instead of inflating without end', async () => {
    expect(await countRowTags(Readable.from(['<row>'.repeat(100)]), 100)).toBeUndefined();
  });
});
