import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { DEFAULT_SPREADSHEET_LIMITS, openWorkbook } from '../../spreadsheet/index.js';
import { readPendingUserSheetChunks } from './pending-user-sheet.js';
import { zipOf } from '../../../test/support/zip.js';

const reader = (file: Buffer) => async (start: number, end: number) => Readable.from([file.subarray(start, end + 1)]);
const open = async (file: Buffer, limits = DEFAULT_SPREADSHEET_LIMITS) =>
  openWorkbook(reader(file), file.length, limits);

/** A workbook of hand-written parts (xl/workbook.xml and its relationships naming sheet1). */
const book = (parts: Record<string, string>) =>
  zipOf(
    Object.entries({
      'xl/workbook.xml':
        '<workbook xmlns:r="urn:r"><sheets><sheet name="One" sheetId="1" r:id="rId1"/></sheets></workbook>',
      'xl/_rels/workbook.xml.rels':
        '<Relationships><Relationship Id="rId1" Type="urn:t/worksheet" Target="worksheets/sheet1.xml"/>' +
        '<Relationship Id="rId9" Type="urn:t/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
      ...parts,
    }).map(([name, data]) => ({ name, data: Buffer.from(data) })),
  );
const sheetXml = (rows: string) => `<worksheet><sheetData>${rows}</sheetData></worksheet>`;

describe('the pending-user sheet', () => {
  it('takes the first non-empty row as the header, passing over blank rows above it', async () => {
    const rowsOf = async (file: Buffer) => {
      const out = [];
      for await (const group of readPendingUserSheetChunks(await open(file), DEFAULT_SPREADSHEET_LIMITS))
        out.push(...group);
      return out;
    };
    const str = (ref: string, v: string) => `<c r="${ref}" t="str"><v>${v}</v></c>`;
    const file = book({
      'xl/worksheets/sheet1.xml': sheetXml(
        `<row r="1" s="2"/><row r="2">${str('A2', ' ')}</row>` +
          `<row r="3">${str('A3', 'Username')}${str('B3', 'Name')}${str('C3', 'Role')}</row>` +
          `<row r="4">${str('A4', 'nurse.one')}${str('B4', 'Nurse One')}${str('C4', 'clinician')}</row>`,
      ),
    });
    expect(await rowsOf(file)).toEqual([
      { row: 4, ok: true, value: { username: 'nurse.one', displayName: 'Nurse One', role: 'clinician' } },
    ]);
    const blank = book({ 'xl/worksheets/sheet1.xml': sheetXml(`<row r="1"/><row r="2">${str('A2', '')}</row>`) });
    await expect(rowsOf(blank)).rejects.toMatchObject({
      code: 'spreadsheet_rejected',
      message: expect.stringMatching(/no header row/),
    });
  });

  it('refuses shared strings past their limit before reading them', async () => {
    const rejected = {
      code: 'spreadsheet_rejected',
      message: expect.stringMatching(/shared strings unpack to more than 1000 bytes/),
    };
    const strings = book({
      'xl/sharedStrings.xml': `<sst>${'<si><t>x</t></si>'.repeat(100)}</sst>`,
      'xl/worksheets/sheet1.xml': sheetXml('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'),
    });
    const workbook = await open(strings);
    const limits = { ...DEFAULT_SPREADSHEET_LIMITS, maxSharedStringsBytes: 1000 };
    await expect(
      (async () => {
        for await (const _ of readPendingUserSheetChunks(workbook, limits));
      })(),
    ).rejects.toMatchObject(rejected);
  });
});
