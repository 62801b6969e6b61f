import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import ExcelJS from 'exceljs';
import { PassThrough } from 'node:stream';

export interface FormPart {
  name: string;
  value?: string;
  file?: { fileName: string; content: Buffer; contentType?: string };
}

/** Builds a multipart/form-data body the way browsers and mobile clients send UploadContent. */
export function multipart(parts: FormPart[]): { body: Buffer; headers: Record<string, string> } {
  const boundary = `----consult${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if (p.file) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.file.fileName}"\r\nContent-Type: ${p.file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(p.file.content, Buffer.from('\r\n'));
    } else {
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value ?? ''}\r\n`),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A real PNG of the given size (noise, so it does not compress to nothing). */
export async function png(width: number, height: number): Promise<Buffer> {
  const raw = randomBytes(width * height * 3);
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** An xlsx workbook written with exceljs's streaming writer. */
export async function xlsx(rows: (string | number | undefined)[][]): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: true });
  const ws = wb.addWorksheet('Pending users');
  for (const r of rows) ws.addRow(r).commit();
  ws.commit();
  await wb.commit();
  return Buffer.concat(chunks);
}

/** A large xlsx streamed row by row from a generator (the test never holds the rows as an array). */
export async function xlsxOf(
  header: string[],
  count: number,
  row: (i: number) => (string | number)[],
): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false });
  const ws = wb.addWorksheet('Pending users');
  ws.addRow(header).commit();
  for (let i = 0; i < count; i++) ws.addRow(row(i)).commit();
  ws.commit();
  await wb.commit();
  return Buffer.concat(chunks);
}
