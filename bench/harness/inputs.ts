/**
 * Inputs that cost time to build, generated once into bench/.cache and reused by later runs:
 * JPEG photos-like images (noise, so the encoder and decoder do real work) and the pending-users
 * spreadsheet.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import ExcelJS from 'exceljs';
import { pendingUserRow } from './pending-users.js';

/** `count` distinct JPEGs of width x height; returns their paths. */
export async function images(cacheDir: string, count: number, width: number, height: number): Promise<string[]> {
  const dir = path.join(cacheDir, `images-${width}x${height}`);
  mkdirSync(dir, { recursive: true });
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `img-${i}.jpg`);
    if (!existsSync(file)) {
      const tint = { r: 60 + ((i * 37) % 160), g: 60 + ((i * 91) % 160), b: 60 + ((i * 53) % 160) };
      const noise = await sharp({
        create: {
          width,
          height,
          channels: 3,
          background: { r: 0, g: 0, b: 0 },
          noise: { type: 'gaussian', mean: 128, sigma: 40 },
        },
      })
        .blur(1.5)
        .png()
        .toBuffer();
      await sharp({ create: { width, height, channels: 3, background: tint } })
        .composite([{ input: noise, blend: 'overlay' }])
        .jpeg({ quality: 85 })
        .toFile(`${file}.tmp`);
      renameSync(`${file}.tmp`, file);
    }
    out.push(file);
  }
  return out;
}

/** The pending-users sheet (username, email, displayName, role) with `rows` valid data rows. */
export async function pendingUsersSheet(cacheDir: string, rows: number): Promise<string> {
  const file = path.join(cacheDir, `pending-users-${rows}.xlsx`);
  if (existsSync(file)) return file;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: `${file}.tmp`,
    useSharedStrings: false,
    useStyles: false,
  });
  const ws = wb.addWorksheet('Users');
  ws.addRow(['username', 'email', 'displayName', 'role']).commit();
  for (let i = 0; i < rows; i++) {
    ws.addRow(pendingUserRow(i)).commit();
  }
  ws.commit();
  await wb.commit();
  renameSync(`${file}.tmp`, file);
  return file;
}
