/**
 * HTTP GET load: `conns` keep-alive connections, each sending the next path of `paths` as soon as the
 * previous response ended (closed loop), for `durationMs` after a warm-up. Non-2xx count as errors.
 */
import http from 'node:http';
import { z } from 'zod';
import { params, finish, deadline, now } from './common.js';
import { latencyFigures } from '../harness/stats.js';

const P = z.object({
  url: z.string(),
  paths: z.array(z.string()).min(1),
  headers: z.record(z.string(), z.string()).default({}),
  conns: z.number().int().positive(),
  warmupMs: z.number().int().nonnegative().default(1000),
  durationMs: z.number().int().positive(),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);
const target = new URL(p.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: p.conns });

let k = 0;
let measuring = false;
let ok = 0;
let errors = 0;
let bytes = 0;
let firstError: string | undefined;
const lat: number[] = [];

function get(): Promise<void> {
  const path = p.paths[k++ % p.paths.length]!;
  const t0 = now();
  return new Promise((resolve) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path, method: 'GET', headers: p.headers, agent },
      (res) => {
        let n = 0;
        let body = '';
        res.on('data', (c: Buffer) => {
          n += c.length;
          if (body.length < 300) body += c.toString();
        });
        res.on('end', () => {
          if (measuring) {
            if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) {
              ok++;
              bytes += n;
              lat.push(now() - t0);
            } else {
              errors++;
              firstError ??= `${res.statusCode} ${body}`;
            }
          }
          resolve();
        });
      },
    );
    req.on('error', (e) => {
      if (measuring) {
        errors++;
        firstError ??= e.message;
      }
      resolve();
    });
    req.end();
  });
}

async function run(until: number): Promise<void> {
  await Promise.all(
    Array.from({ length: p.conns }, async () => {
      while (now() < until) await get();
    }),
  );
}

async function main(): Promise<void> {
  await run(now() + p.warmupMs);
  measuring = true;
  const t0 = now();
  await run(t0 + p.durationMs);
  const elapsed = now() - t0;
  measuring = false;
  agent.destroy();
  finish({
    ok,
    errors,
    firstError,
    elapsedMs: elapsed,
    throughput_per_s: (ok / elapsed) * 1000,
    avgBytes: ok ? bytes / ok : 0,
    ...latencyFigures(lat),
  });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
