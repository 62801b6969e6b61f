import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { DEFAULT_SPREADSHEET_LIMITS, type RangeReader } from './limits.js';
import { openZipContainer, type ZipContainer } from './zip-container.js';
import { openWorkbook } from './workbook.js';
import { readSheetRows } from './cells.js';
import { xlsxOf } from '../../test/support/form.js';
import { zipOf } from '../../test/support/zip.js';

/** Ranged reads of an in-memory file, each one recorded. */
/** `chunk`: the body's chunk size; `ahead`: how many chunks the body may hold read ahead of its reader. */
function store(file: Buffer, chunk = 16_384, ahead = 16) {
  const reads: [number, number][] = [];
  const bodies: Readable[] = [];
  const read: RangeReader = async (start, end) => {
    reads.push([start, end]);
    const bytes = file.subarray(start, end + 1);
    // In 16 KiB chunks, as a store streams a body.
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
      })(),
      { highWaterMark: ahead },
    );
    bodies.push(body);
    return body;
  };
  return { read, reads, bodies };
}

const open = (file: Buffer, limits = DEFAULT_SPREADSHEET_LIMITS) =>
  openZipContainer(store(file).read, file.length, limits);

const rejected = (message?: RegExp) => ({
  code: 'spreadsheet_rejected',
  ...(message ? { message: expect.stringMatching(message) } : {}),
});

async function bytesOf(container: ZipContainer, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await container.open(container.parts.get(name)!)) chunks.push(c);
  return Buffer.concat(chunks);
}

/** Where the central directory starts, and the end record (a file written by zipOf: no comment). */
const directoryOf = (file: Buffer) => ({ cd: file.readUInt32LE(file.length - 22 + 16), eocd: file.length - 22 });
const patched = (file: Buffer, edit: (copy: Buffer) => void) => {
  const copy = Buffer.from(file);
  edit(copy);
  return copy;
};

const sheet = '<worksheet><sheetData><row r="1"><c r="A1" t="str"><v>one</v></c></row></sheetData></worksheet>';
const small = zipOf([
  { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet) },
  { name: 'xl/styles.xml', data: Buffer.from('<styleSheet/>') },
]);

describe('the zip container, read by yauzl over ranged reads', () => {
  it('reads the directory in at most two ranged reads, then each part in two (its local header, its data)', async () => {
    const file = await xlsxOf(['username', 'role'], 2_000, (i) => [`user${i}`, 'patient']);
    const s = store(file);
    const container = await openZipContainer(s.read, file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(s.reads).toHaveLength(1); // the directory lies in the tail
    expect([...container.parts.keys()]).toContain('xl/worksheets/sheet1.xml');
    s.reads.length = 0;
    await bytesOf(container, 'xl/worksheets/sheet1.xml');
    expect(s.reads).toHaveLength(2);

    // 1,500 parts with long names: a directory of about 200 KiB below the tail, read in one more range
    // (yauzl alone reads each directory entry in two reads of its own).
    const many = zipOf(
      Array.from({ length: 1_500 }, (_, i) => ({
        name: `xl/media/${'long-name-'.repeat(8)}${i}.xml`,
        data: Buffer.from('<a/>'),
      })),
    );
    const m = store(many);
    const big = await openZipContainer(m.read, many.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(big.entries).toBe(1_500);
    expect(m.reads).toHaveLength(2);
    expect((await bytesOf(big, `xl/media/${'long-name-'.repeat(8)}7.xml`)).toString()).toBe('<a/>');
  });

  it('answers a malformed container with spreadsheet_rejected, whatever yauzl found wrong', async () => {
    const { cd, eocd } = directoryOf(small);
    const malformed: Record<string, Buffer> = {
      'not a zip at all': Buffer.from('PK\u0003\u0004' + 'x'.repeat(200)),
      truncated: small.subarray(0, small.length - 5),
      'bytes after the end record': Buffer.concat([small, Buffer.from('trailing')]),
      'directory signature wrong': patched(small, (b) => b.writeUInt32LE(0x12345678, cd)),
      'directory past the end of the file': patched(small, (b) => b.writeUInt32LE(small.length + 10, eocd + 16)),
      'more entries declared than present': patched(small, (b) => {
        b.writeUInt16LE(5, eocd + 8);
        b.writeUInt16LE(5, eocd + 10);
      }),
      'a multi-disk archive': patched(small, (b) => b.writeUInt16LE(1, eocd + 4)),
      'a name length past the directory': patched(small, (b) => b.writeUInt16LE(0xffff, cd + 28)),
      'a directory far below the end (over 4 MiB)': (() => {
        const padded = zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet) }]);
        const filler = Buffer.alloc(5 * 1024 * 1024);
        const { eocd: end } = directoryOf(padded);
        return patched(Buffer.concat([padded.subarray(0, end), filler, padded.subarray(end)]), (b) =>
          b.writeUInt32LE(0, b.length - 22 + 16),
        );
      })(),
      'an absolute part name': zipOf([{ name: '/etc/passwd', data: Buffer.from('x') }]),
      'a part name climbing out': zipOf([{ name: 'xl/../../x.xml', data: Buffer.from('x') }]),
    };
    for (const [what, file] of Object.entries(malformed)) {
      const limits = { ...DEFAULT_SPREADSHEET_LIMITS, maxFileBytes: 10 * 1024 * 1024 };
      await expect(open(file, limits).then(() => what)).rejects.toMatchObject(rejected());
    }
  });

  it('refuses a part it cannot read: a bad local header, corrupt data, sizes other than declared, encryption, an unknown method', async () => {
    const container = async (file: Buffer) => bytesOf(await open(file), 'xl/worksheets/sheet1.xml');
    const part = (extra: Partial<{ declaredSize: number }> = {}) =>
      zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet), ...extra }]);
    const { cd } = directoryOf(part());
    const cases: Record<string, Buffer> = {
      'local header signature wrong': patched(part(), (b) => b.writeUInt32LE(0, 0)),
      'data past the end of the file': patched(part(), (b) => b.writeUInt16LE(0xffff, 26)),
      'corrupt deflate data': patched(part(), (b) => b.fill(0xff, 30 + 24, 30 + 40)),
      'more bytes than declared': part({ declaredSize: 20 }),
      'fewer bytes than declared': part({ declaredSize: sheet.length + 50 }),
      encrypted: patched(part(), (b) => b.writeUInt16LE(1, cd + 8)),
      'compression method 12': patched(part(), (b) => b.writeUInt16LE(12, cd + 10)),
    };
    for (const [what, file] of Object.entries(cases))
      await expect(container(file).then(() => what)).rejects.toMatchObject(rejected());
    await expect(container(cases.encrypted!)).rejects.toMatchObject(rejected(/Encrypted/));
    await expect(container(cases['compression method 12']!)).rejects.toMatchObject(rejected(/method 12/));
  });

  it('keeps the limits: entries, declared total, compression ratio, file size', async () => {
    const limits = DEFAULT_SPREADSHEET_LIMITS;
    await expect(open(zipOf([{ name: 'a.xml', data: Buffer.alloc(20 * 1024 * 1024) }]))).rejects.toMatchObject(
      rejected(/zip bomb/),
    );
    const parts = (n: number) =>
      zipOf(Array.from({ length: n }, (_, i) => ({ name: `p${i}.xml`, data: Buffer.from('<a/>') })));
    await expect(open(parts(11), { ...limits, maxZipEntries: 10 })).rejects.toMatchObject(rejected(/11 parts/));
    expect((await open(parts(10), { ...limits, maxZipEntries: 10 })).entries).toBe(10);
    const lying = zipOf([{ name: 'a.xml', data: Buffer.from('<a/>'), declaredSize: 600 * 1024 * 1024 }]);
    await expect(open(lying, { ...limits, maxCompressionRatio: Infinity })).rejects.toMatchObject(
      rejected(/unpacks to more than/),
    );
    await expect(open(small, { ...limits, maxFileBytes: small.length - 1 })).rejects.toMatchObject(rejected(/exceeds/));
    await expect(open(Buffer.from('PK\u0003\u0004'))).rejects.toMatchObject(rejected());
  });

  it('reads a workbook whose parts declare ZIP64 sizes, and holds those sizes to the limits', async () => {
    const file = zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet), zip64: true }]);
    const book = await openWorkbook(store(file).read, file.length, DEFAULT_SPREADSHEET_LIMITS);
    expect(book.sheet.uncompressed).toBe(sheet.length);
    const rows = [];
    for await (const group of readSheetRows(await book.open(book.sheet), [])) rows.push(...group);
    expect(rows.map((r) => r.cells[1])).toEqual(['one']);
    const huge = zipOf([
      { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet), zip64: true, declaredSize: 2 ** 33 },
    ]);
    await expect(open(huge)).rejects.toMatchObject(rejected(/zip bomb/));
  });

  // Whether an early stop closes the ranged read is not checked here: whether the body had already been
  // read to its end when the reader stopped depends on the machine's speed (seen both ways), so it cannot
  // decide a test as written; an open point of issue 38.
  it('passes a storage failure on as it is (the job retries it)', async () => {
    const file = await xlsxOf(['username', 'role'], 20_000, (i) => [`user${i}`, 'patient']);
    const s = store(file, 1024, 1);

    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    let opened = false;
    const failing: RangeReader = async (start, end) =>
      opened && end - start > 1000
        ? new Readable({
            read() {
              this.destroy(reset);
            },
          })
        : s.read(start, end);
    const again = await openZipContainer(failing, file.length, DEFAULT_SPREADSHEET_LIMITS);
    opened = true; // the parts' data fail from now on
    await expect(
      (async () => {
        for await (const _ of await again.open(again.parts.get('xl/worksheets/sheet1.xml')!));
      })(),
    ).rejects.toBe(reset);
    await expect(
      openZipContainer(async () => Promise.reject(reset), file.length, DEFAULT_SPREADSHEET_LIMITS),
    ).rejects.toBe(reset);
  });
});
