/**
 * Socket.IO RPC load: `conns` websocket clients call `event` with an acknowledgement, either closed
 * loop (`inflight` calls outstanding per connection, as fast as acks come back) or open loop (a fixed
 * total `rate` per second). Reports throughput and latency; acks `{ ok: false }` count as errors.
 */
import { z } from 'zod';
import type { Socket } from 'socket.io-client';
import { connectMany } from './sio-client.js';
import { params, finish, deadline, tell, now, sleep } from './common.js';
import { latencyFigures } from '../harness/stats.js';
import { cpuSeconds } from '../harness/proc-cpu.js';

const P = z.object({
  url: z.string(),
  path: z.string().default('/socket.io'),
  host: z.string().optional(),
  tokens: z.array(z.string()).default([]),
  conns: z.number().int().positive(),
  event: z.string(),
  /** Arguments per connection (index modulo length); the ack callback is appended. */
  args: z.array(z.array(z.unknown())).min(1),
  /** Optional call each connection makes once before the warm-up (e.g. joining its meeting). */
  setup: z.object({ event: z.string(), args: z.array(z.array(z.unknown())).min(1) }).optional(),
  mode: z.enum(['closed', 'open']),
  inflight: z.number().int().positive().default(1),
  rate: z.number().positive().default(1000),
  warmupMs: z.number().int().nonnegative().default(500),
  durationMs: z.number().int().positive(),
  ackTimeoutMs: z.number().int().positive().default(5000),
  deadlineMs: z.number().int().positive(),
  /** The serving process: its CPU time over the measured window gives `server_cpu_us_per_call`. */
  serverPid: z.number().int().positive().optional(),
  /** Another process the calls go through (B2's actor owner): its CPU per call is `owner_cpu_us_per_call`. */
  ownerPid: z.number().int().positive().optional(),
});
const p = params(P);
deadline(p.deadlineMs);

const lat: number[] = [];
let ok = 0;
let errors = 0;
let firstError: unknown;
let measuring = false;
/** Bytes of the first answer's JSON: both sides of B1 answer with the same (decision 1147). */
let replyBytes = 0;

function call(socket: Socket, i: number): Promise<void> {
  const args = p.args[i % p.args.length]!;
  const t0 = now();
  return socket
    .timeout(p.ackTimeoutMs)
    .emitWithAck(p.event, ...args)
    .then(
      (ack: any) => {
        if (!replyBytes) replyBytes = Buffer.byteLength(JSON.stringify(ack ?? null));
        if (!measuring) return;
        if (ack && typeof ack === 'object' && ack.ok === false) {
          errors++;
          firstError ??= ack.error;
        } else {
          ok++;
          lat.push(now() - t0);
        }
      },
      (e: Error) => {
        if (!measuring) return;
        errors++;
        firstError ??= e.message;
      },
    );
}

async function closedLoop(sockets: Socket[], until: number): Promise<void> {
  const loop = async (s: Socket, i: number) => {
    while (now() < until) await call(s, i);
  };
  await Promise.all(sockets.flatMap((s, i) => Array.from({ length: p.inflight }, () => loop(s, i))));
}

async function openLoop(sockets: Socket[], until: number): Promise<void> {
  // The schedule follows the clock, not the loop: a late timer sends what is owed.
  const t0 = now();
  let k = 0;
  const calls: Promise<void>[] = [];
  while (now() < until) {
    const owed = Math.floor(((now() - t0) * p.rate) / 1000);
    for (; k < owed; k++) calls.push(call(sockets[k % sockets.length]!, k % sockets.length));
    await sleep(2);
  }
  await Promise.all(calls);
}

async function main(): Promise<void> {
  const token = (i: number) => (p.tokens.length ? p.tokens[i % p.tokens.length] : undefined);
  const sockets = await connectMany(p.conns, (i) => ({ url: p.url, path: p.path, host: p.host, token: token(i) }));
  if (p.setup) {
    // Set-up is not measured: 20 at a time with a generous timeout, so a slow database only slows it.
    const { event, args } = p.setup;
    for (let i = 0; i < sockets.length; i += 20) {
      await Promise.all(
        sockets.slice(i, i + 20).map(async (s, j) => {
          const ack = await s.timeout(60_000).emitWithAck(event, ...args[(i + j) % args.length]!);
          if (ack && typeof ack === 'object' && ack.ok === false)
            throw new Error(`setup ${event} refused: ${JSON.stringify(ack.error)}`);
        }),
      );
    }
  }
  tell('ready', { conns: sockets.length });
  const run = p.mode === 'closed' ? closedLoop : openLoop;
  await run(sockets, now() + p.warmupMs);
  const cpu0 = p.serverPid ? cpuSeconds(p.serverPid) : undefined;
  const owner0 = p.ownerPid ? cpuSeconds(p.ownerPid) : undefined;
  measuring = true;
  const t0 = now();
  await run(sockets, t0 + p.durationMs);
  const elapsed = now() - t0;
  measuring = false;
  const cpu1 = p.serverPid ? cpuSeconds(p.serverPid) : undefined;
  const owner1 = p.ownerPid ? cpuSeconds(p.ownerPid) : undefined;
  for (const s of sockets) s.disconnect();
  finish({
    ok,
    errors,
    firstError: firstError === undefined ? undefined : JSON.stringify(firstError),
    elapsedMs: elapsed,
    throughput_per_s: (ok / elapsed) * 1000,
    reply_bytes: replyBytes,
    // What a call cost the server's process (all its threads, GC included), whatever the machine's pace.
    ...(cpu0 !== undefined && cpu1 !== undefined && ok ? { server_cpu_us_per_call: ((cpu1 - cpu0) / ok) * 1e6 } : {}),
    ...(owner0 !== undefined && owner1 !== undefined && ok
      ? { owner_cpu_us_per_call: ((owner1 - owner0) / ok) * 1e6 }
      : {}),
    ...latencyFigures(lat),
  });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
