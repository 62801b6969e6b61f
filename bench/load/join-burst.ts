/**
 * Meeting joins under a burst (B14): `clients` authenticated hub connections spread round-robin over the
 * nodes, each a member of one meeting; the meetings' hosts open them (initEvent, not measured). On the
 * harness's `start`: every client asks `event` once, at most `burstInflight` asks outstanding (the
 * burst: a node's clients all joining at once after a reconnection), then a closed loop of the same ask,
 * one in flight per client, for `loopMs` (a member's join again: what a reconnected client does).
 * Reported: the burst's asks/s (all of them over the time from the first ask to the last ack) and
 * latencies, the loop's asks/s and latencies, and failed asks (negative acks and timeouts).
 */
import { z } from 'zod';
import type { Socket } from 'socket.io-client';
import { connectMany } from './sio-client.js';
import { params, finish, deadline, tell, now, waitFor } from './common.js';
import { latencyFigures } from '../harness/stats.js';

const P = z.object({
  targets: z.array(z.object({ url: z.string(), host: z.string().optional() })).min(1),
  path: z.string(),
  /** One connection each: its access token and its meeting. */
  clients: z.array(z.object({ token: z.string(), eventId: z.string() })).min(1),
  /** Each host opens its meetings (initEvent) before the measure. */
  hosts: z.array(z.object({ token: z.string(), eventIds: z.array(z.string()) })),
  /** `joinEvent` for the product, `getMeetingDetails` for the baseline (a turn with no write). */
  event: z.enum(['joinEvent', 'getMeetingDetails']),
  burstInflight: z.number().int().positive(),
  loopMs: z.number().int().positive(),
  ackTimeoutMs: z.number().int().positive().default(120_000),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);

interface Phase {
  lat: number[];
  failed: number;
  firstError?: string;
}

function ask(socket: Socket, event: string, eventId: string, into: Phase | undefined): Promise<void> {
  const t0 = now();
  return socket
    .timeout(p.ackTimeoutMs)
    .emitWithAck(event, { eventId })
    .then(
      (ack: { ok?: boolean; error?: unknown } | undefined) => {
        if (!into) {
          if (ack?.ok === false) throw new Error(`set-up ${event} refused: ${JSON.stringify(ack.error)}`);
          return;
        }
        if (ack?.ok === false) {
          into.failed++;
          into.firstError ??= JSON.stringify(ack.error);
        } else into.lat.push(now() - t0);
      },
      (e: Error) => {
        if (!into) throw e;
        into.failed++;
        into.firstError ??= e.message;
      },
    );
}

async function main(): Promise<void> {
  const n = p.targets.length;
  const target = (i: number, token: string) => ({ ...p.targets[i % n]!, path: p.path, token });
  const sockets = await connectMany(p.clients.length, (i) => target(i, p.clients[i]!.token));
  const hosts = await connectMany(p.hosts.length, (i) => target(i, p.hosts[i]!.token));
  // Set-up, not measured: the hosts open their meetings, 20 at a time.
  const opens = hosts.flatMap((s, h) =>
    p.hosts[h]!.eventIds.map((eventId) => () => ask(s, 'initEvent', eventId, undefined)),
  );
  for (let i = 0; i < opens.length; i += 20) await Promise.all(opens.slice(i, i + 20).map((f) => f()));
  tell('ready', { clients: sockets.length, meetings: opens.length });
  await waitFor('start');

  const burst: Phase = { lat: [], failed: 0 };
  let next = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: Math.min(p.burstInflight, sockets.length) }, async () => {
      while (next < sockets.length) {
        const i = next++;
        await ask(sockets[i]!, p.event, p.clients[i]!.eventId, burst);
      }
    }),
  );
  const burstMs = now() - t0;

  const loop: Phase = { lat: [], failed: 0 };
  const t1 = now();
  const until = t1 + p.loopMs;
  await Promise.all(
    sockets.map(async (s, i) => {
      while (now() < until) await ask(s, p.event, p.clients[i]!.eventId, loop);
    }),
  );
  const loopMs = now() - t1;

  for (const s of [...sockets, ...hosts]) s.disconnect();
  const figures = (ph: Phase, ms: number, prefix: string) => {
    const l = latencyFigures(ph.lat);
    return {
      [`${prefix}_per_s`]: (ph.lat.length / ms) * 1000,
      [`${prefix}_p50_ms`]: l.p50_ms,
      [`${prefix}_p99_ms`]: l.p99_ms,
      [`${prefix}_failed`]: ph.failed,
    };
  };
  finish({
    burstMs,
    burstOk: burst.lat.length,
    loopOk: loop.lat.length,
    firstError: burst.firstError ?? loop.firstError,
    ...figures(burst, burstMs, 'burst'),
    ...figures(loop, loopMs, 'loop'),
  });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
