/**
 * One streamed upload: either `bytes` of generated content (unique per `seed`, starting with the
 * magic bytes of an MP4 so upload checks accept it) or a file from disk; sent as multipart/form-data
 * (field `file`, plus `fields`) or as a raw body, with a known Content-Length and backpressure, so
 * the generator's own memory stays flat. Reports elapsed time, MiB/s and the response.
 */
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { params, finish, deadline, now } from './common.js';

const P = z.object({
  url: z.string(),
  path: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  multipart: z.boolean(),
  fileName: z.string().default('bench.mp4'),
  fields: z.record(z.string(), z.string()).default({}),
  bytes: z.number().int().positive().optional(),
  file: z.string().optional(),
  seed: z.number().int().default(0),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);
const CHUNK = 1 << 20;
const MP4_HEAD = Buffer.from([
  0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d, 0x69, 0x73, 0x6f,
  0x32,
]);

/** `total` bytes in 1 MiB chunks: one random block, each chunk stamped with (seed, index). */
function* generated(total: number): Generator<Buffer> {
  const block = randomBytes(CHUNK);
  for (let off = 0, i = 0; off < total; off += CHUNK, i++) {
    const c = Buffer.from(block.subarray(0, Math.min(CHUNK, total - off)));
    if (c.length >= 32) {
      if (i === 0) MP4_HEAD.copy(c, 0);
      else c.writeUInt32BE(i, 0);
      c.writeUInt32BE(p.seed >>> 0, 28);
    }
    yield c;
  }
}

function body(): { size: number; stream: Readable } {
  if (p.file) return { size: statSync(p.file).size, stream: createReadStream(p.file, { highWaterMark: CHUNK }) };
  return { size: p.bytes!, stream: Readable.from(generated(p.bytes!), { objectMode: false }) };
}

async function main(): Promise<void> {
  const content = body();
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const pre = p.multipart
    ? Buffer.from(
        Object.entries(p.fields)
          .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
          .join('') +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${p.fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      )
    : Buffer.alloc(0);
  const post = p.multipart ? Buffer.from(`\r\n--${boundary}--\r\n`) : Buffer.alloc(0);
  const target = new URL(p.url);
  const headers = {
    ...p.headers,
    'content-type': p.multipart ? `multipart/form-data; boundary=${boundary}` : 'application/octet-stream',
    'content-length': String(pre.length + content.size + post.length),
  };
  const t0 = now();
  // The wall clock at the request's start: a caller timing a flow that begins with this upload starts
  // there, not at this generator's spawn (a process start and module load).
  const startedAt = Date.now();
  const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      { host: target.hostname, port: target.port, method: 'POST', path: p.path, headers },
      (r) => {
        let text = '';
        r.on('data', (c) => (text += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.write(pre);
    content.stream.on('data', (c: Buffer) => {
      if (!req.write(c)) {
        content.stream.pause();
        req.once('drain', () => content.stream.resume());
      }
    });
    content.stream.on('end', () => req.end(post));
    content.stream.on('error', reject);
  });
  const elapsed = now() - t0;
  if (res.status >= 300) return finish({ error: `HTTP ${res.status}: ${res.text.slice(0, 500)}` });
  finish({
    status: res.status,
    body: res.text.slice(0, 2000),
    bytes: content.size,
    elapsedMs: elapsed,
    startedAt,
    mib_per_s: content.size / 2 ** 20 / (elapsed / 1000),
  });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
