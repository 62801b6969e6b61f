/**
 * Baseline of B9: sharp alone making the same thumbnails as the thumbnail job (metadata, rotate,
 * 320 px inside, WebP q80) from the same JPEGs already in memory, with the workers' concurrency.
 */
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { Hosted } from '../harness/host.js';

async function run(a: { files: string[]; concurrency: number }): Promise<{ elapsedMs: number; done: number }> {
  const inputs = await Promise.all(a.files.map((f) => readFile(f)));
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: a.concurrency }, async () => {
      while (next < inputs.length) {
        const image = sharp(inputs[next++]!, { failOn: 'error', sequentialRead: true });
        await image.metadata();
        await image
          .rotate()
          .resize(320, 320, { fit: 'inside', withoutEnlargement: true })
          .webp({ quality: 80 })
          .toBuffer();
        done++;
      }
    }),
  );
  return { elapsedMs: performance.now() - t0, done };
}

export async function start(): Promise<Hosted> {
  return { info: {}, calls: { run }, stop: async () => undefined };
}
