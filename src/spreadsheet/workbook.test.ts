import { describe, expect, it } from '@jest/globals';
import { PassThrough, Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import fc from 'fast-check';
import { DEFAULT_SPREADSHEET_LIMITS } from './limits.js';
import { openWorkbook } from './workbook.js';
import { readSharedStrings, readSheetRows, type SheetCells } from './cells.js';
import { countRowTags, countWorksheetRows } from './row-count.js';
import { xlsx, xlsxOf } from '../../test/support/form.js';
import { zipOf } from '../../test/support/zip.js';

const reader = (file: Buffer) => async (start: number, end: number) => Readable.from([file.subarray(start, end + 1)]);

describe('counting the rows of a worksheet without parsing it', () => {
  it('counts every row of a streamed workbook (header included), as exceljs wrote it', async () => {
    const file = await xlsxOf(['username', 'email', 'display name', 'role'], 12_345, (i) => [
      `user${i}`,
      `user${i}@example.org`,
      `User ${i}`,
      'patient',
    ]);
    const book = await openWorkbook(reader(file), file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(await countWorksheetRows(book, book.sheet)).toBe(12_346);
  });

  it('counts a small shared-strings workbook too', async () => {
    const file = await xlsx([
      ['username', 'role'],
      ['a', 'patient'],
      ['b', 'clinician'],
    ]);
    const book = await openWorkbook(reader(file), file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(book.sharedStrings).toBeDefined();
    expect(await countWorksheetRows(book, book.sheet)).toBe(3);
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

const open = async (file: Buffer, limits = DEFAULT_SPREADSHEET_LIMITS) =>
  openWorkbook(reader(file), file.length, limits);

/** Every row of the workbook's first sheet, as the product reads it: row number → cell texts. */
async function sheetOf(file: Buffer): Promise<Map<number, SheetCells>> {
  const book = await open(file);
  const shared = book.sharedStrings ? await readSharedStrings(await book.open(book.sharedStrings)) : [];
  const rows = new Map<number, SheetCells>();
  for await (const group of readSheetRows(await book.open(book.sheet), shared))
    for (const row of group) rows.set(row.number, row);
  return rows;
}

const chunked = (text: string, size: number) => {
  const bytes = Buffer.from(text);
  return (async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  })();
};

/** A workbook of hand-written parts (xl/workbook.xml and its relationships naming sheet1 unless given). */
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

/** What a spreadsheet shows for a value exceljs wrote (undefined: an empty cell). */
type Written =
  | string
  | number
  | boolean
  | null
  | { richText: { text: string }[] }
  | { formula: string; result: string | number }
  | { text: string; hyperlink: string }
  | { error: '#N/A' };
function shown(v: Written): string {
  if (v === null) return '';
  if (typeof v !== 'object') return String(v);
  if ('richText' in v) return v.richText.map((r) => r.text).join('');
  if ('formula' in v) return String(v.result);
  if ('hyperlink' in v) return v.text;
  return '';
}

// Text XML can carry as written: no control characters (a CR becomes LF in any XML parser) and no
// `_xHHHH_` sequences (xlsx's escape, which exceljs does not apply when it writes).
const text = fc
  .string({ unit: 'grapheme', maxLength: 24 })
  .filter((s) => !/[\u0000-\u001f\u007f-\u009f\ufffe\uffff]/.test(s) && !/_x[0-9a-fA-F]{4}_/.test(s));
type How = 'stream-shared' | 'stream-inline' | 'document';
/**
 * Cell values of every kind exceljs writes. Its streaming writer keys shared strings by the value, so
 * every rich text of a shared-strings workbook becomes the first one: rich text is left out there.
 */
const written = (how: How): fc.Arbitrary<Written> =>
  fc.oneof(
    text,
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    ...(how === 'stream-shared'
      ? []
      : [
          fc
            .array(text, { minLength: 1, maxLength: 3 })
            .map((t) => ({ richText: t.map((s) => ({ text: s, font: { bold: true } })) })),
        ]),
    fc.tuple(text, fc.integer()).map(([s, n]) => ({ formula: 'A1', result: n % 2 ? s : n })),
    // exceljs writes a hyperlink without text as the JSON of the value.
    text.filter((s) => s !== '').map((s) => ({ text: s, hyperlink: 'https://example.org/a' })),
    fc.constant({ error: '#N/A' as const }),
  );

async function writeBook(rows: Written[][], how: How): Promise<Buffer> {
  if (how === 'document') {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('First');
    rows.forEach((r, i) => (ws.getRow(i + 1).values = r as ExcelJS.CellValue[]));
    wb.addWorksheet('Second').addRow(['not', 'this', 'one']);
    return Buffer.from(await wb.xlsx.writeBuffer());
  }
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: how === 'stream-shared' });
  const ws = wb.addWorksheet('First');
  for (const r of rows) ws.addRow(r as ExcelJS.CellValue[]).commit();
  ws.commit();
  const second = wb.addWorksheet('Second');
  second.addRow(['not', 'this', 'one']).commit();
  second.commit();
  await wb.commit();
  return Buffer.concat(chunks);
}

describe('reading a worksheet', () => {
  it('reads every cell as the value exceljs wrote, for every way exceljs writes a workbook', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom<How>('stream-shared', 'stream-inline', 'document')
          .chain((how) =>
            fc.tuple(
              fc.array(fc.array(written(how), { maxLength: 12 }), { minLength: 1, maxLength: 25 }),
              fc.constant(how),
            ),
          ),
        async ([rows, how]) => {
          const read = await sheetOf(await writeBook(rows, how));
          rows.forEach((r, i) => {
            const got = read.get(i + 1)?.cells ?? [];
            const want = r.map(shown);
            for (let c = 0; c < Math.max(want.length, got.length - 1); c++)
              expect({ row: i + 1, col: c + 1, how, text: got[c + 1] ?? '' }).toEqual({
                row: i + 1,
                col: c + 1,
                how,
                text: want[c] ?? '',
              });
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('keeps a character whole wherever the bytes are cut into chunks', async () => {
    const xml = sheetXml(
      '<row r="1"><c r="A1" t="inlineStr"><is><t>Zoë Łukasiewicz 李小龍 😀</t></is></c><c r="B1" t="str"><v>Ñandú</v></c></row>',
    );
    for (let size = 1; size <= 40; size++) {
      const rows: SheetCells[] = [];
      for await (const group of readSheetRows(chunked(xml, size), [])) rows.push(...group);
      expect({ size, cells: rows[0]!.cells.slice(1) }).toEqual({ size, cells: ['Zoë Łukasiewicz 李小龍 😀', 'Ñandú'] });
    }
    const sst = '<sst><si><t>Zoë 李 😀</t></si><si><r><t>Ñan</t></r><r><t>dú</t></r></si></sst>';
    for (let size = 1; size <= 20; size++)
      expect(await readSharedStrings(chunked(sst, size))).toEqual(['Zoë 李 😀', 'Ñandú']);
  });

  it('reads the parts other writers make: prefixes, implicit references, runs, escapes, CDATA and every cell type', async () => {
    const file = book({
      'xl/sharedStrings.xml':
        '\ufeff<x:sst xmlns:x="urn:x"><x:si><x:t>plain</x:t></x:si>' +
        '<x:si><x:r><x:t>Ri</x:t></x:r><x:r><x:rPr><x:b/></x:rPr><x:t xml:space="preserve">ch </x:t></x:r><x:rPh><x:t>ふりがな</x:t></x:rPh></x:si>' +
        '<x:si><x:t>a_x000D_b_x005F_x0041_</x:t></x:si>' +
        '<x:si><x:t>山田</x:t><x:rPh sb="0" eb="2"><x:t>ヤマダ</x:t></x:rPh></x:si></x:sst>',
      'xl/worksheets/sheet1.xml':
        '<x:worksheet xmlns:x="urn:x"><x:sheetData>' +
        '<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c><x:c t="s"><x:v>1</x:v></x:c><x:c t="s"><x:v>2</x:v></x:c><x:c t="s"><x:v>3</x:v></x:c></x:row>' +
        '<x:row><x:c r="B2" t="inlineStr"><x:is><x:r><x:t>in</x:t></x:r><x:r><x:t>line</x:t></x:r><x:rPh><x:t>x</x:t></x:rPh></x:is></x:c>' +
        '<x:c t="str"><x:v><![CDATA[<cdata> & more]]></x:v></x:c><x:c r="E2" t="b"><x:v>1</x:v></x:c><x:c t="b"><x:v>0</x:v></x:c></x:row>' +
        '<x:row r="5"><x:c r="A5" t="e"><x:v>#DIV/0!</x:v></x:c><x:c r="B5" t="d"><x:v>2026-11-27T10:00:00</x:v></x:c>' +
        '<x:c r="C5"><x:f>1+1</x:f><x:v>2</x:v></x:c><x:c r="D5" t="str"><x:f>A1</x:f><x:v>plain</x:v></x:c><x:c r="E5"><x:f>A1</x:f></x:c>' +
        '<x:c r="F5"><x:v>1.5E+3</x:v></x:c><x:c r="G5" s="3"/><x:c r="H5" t="s"><x:v>99</x:v></x:c></x:row>' +
        '<x:row r="6"><x:c r="BH6" t="str"><x:v>far</x:v></x:c></x:row>' +
        '<x:row r="7"><x:c r="A7" t="str"><x:v>a &amp;lt; b</x:v></x:c></x:row>' +
        '</x:sheetData></x:worksheet>',
    });
    const rows = await sheetOf(file);
    expect([...rows.keys()]).toEqual([1, 2, 5, 6, 7]);
    // The phonetic guide is not the name (exceljs read `ヤマダ` for `山田`; decision 407).
    expect(rows.get(1)!.cells.slice(1)).toEqual(['plain', 'Rich ', 'a\rb_x0041_', '山田']);
    expect(rows.get(2)!.cells.slice(1)).toEqual([undefined, 'inline', '<cdata> & more', undefined, 'true', 'false']);
    expect(rows.get(5)!.cells.slice(1)).toEqual([
      '',
      '2026-11-27T10:00:00',
      '2',
      'plain',
      undefined,
      '1500',
      undefined,
      '',
    ]);
    expect(rows.get(5)!.width).toBe(8);
    expect(rows.get(6)!.width).toBe(60);
    // References are decoded once: the cell's text is `a &lt; b` (exceljs read `a < b`; decision 407).
    expect(rows.get(7)!.cells[1]).toBe('a &lt; b');
  });

  it('reads the first sheet in tab order and the shared strings the relationships name', async () => {
    const file = zipOf(
      Object.entries({
        'xl/workbook.xml':
          '<workbook xmlns:r="urn:r"><sheets><sheet name="Front" sheetId="2" r:id="rId7"/><sheet name="Back" sheetId="1" r:id="rId1"/></sheets></workbook>',
        'xl/_rels/workbook.xml.rels':
          '<Relationships><Relationship Id="rId1" Type="urn:t/worksheet" Target="worksheets/sheet1.xml"/>' +
          '<Relationship Id="rId7" Type="urn:t/worksheet" Target="/xl/worksheets/sheet2.xml"/>' +
          '<Relationship Id="rId8" Type="urn:t/sharedStrings" Target="./strings/all.xml"/></Relationships>',
        'xl/worksheets/sheet1.xml': sheetXml('<row r="1"><c r="A1" t="str"><v>back</v></c></row>'),
        'xl/worksheets/sheet2.xml': sheetXml('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'),
        'xl/strings/all.xml': '<sst><si><t>front</t></si></sst>',
      }).map(([name, data]) => ({ name, data: Buffer.from(data) })),
    );
    expect((await sheetOf(file)).get(1)!.cells[1]).toBe('front');
  });

  it('falls back to the first sheet part when the workbook part is missing', async () => {
    const file = zipOf([
      {
        name: 'xl/worksheets/sheet3.xml',
        data: Buffer.from(sheetXml('<row r="1"><c r="A1" t="str"><v>only</v></c></row>')),
      },
    ]);
    expect((await sheetOf(file)).get(1)!.cells[1]).toBe('only');
  });

  it('refuses malformed XML, a part larger than declared and a workbook without sheets', async () => {
    const rejected = { code: 'spreadsheet_rejected' };
    await expect(
      sheetOf(book({ 'xl/worksheets/sheet1.xml': '<worksheet><sheetData><row r="1"><c' })),
    ).rejects.toMatchObject(rejected);
    await expect(sheetOf(book({ 'xl/worksheets/sheet1.xml': sheetXml('<row r="x"/>') }))).rejects.toMatchObject(
      rejected,
    );
    const lying = zipOf([
      { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheetXml('<row/>'.repeat(1000))), declaredSize: 100 },
    ]);
    await expect(sheetOf(lying)).rejects.toMatchObject(rejected);
    await expect(sheetOf(zipOf([{ name: 'xl/styles.xml', data: Buffer.from('<styleSheet/>') }]))).rejects.toMatchObject(
      rejected,
    );
  });
});
