/**
 * Meeting fan-out: `participants` clients spread round-robin over the nodes join one meeting; a host
 * client (also joined) sends `messages` notifications, one every `intervalMs`. Each carries a marker
 * (the string "$MARK" in `send.args` is replaced); a delivery is any `receive` push whose JSON holds
 * it. Latency = receipt - send, in this one process (one clock).
 */
import { z } from 'zod';
import type { Socket } from 'socket.io-client';
import { params, finish, deadline, tell, now, sleep } from './common.js';
import { connectMany } from './sio-client.js';
import { latencyFigures } from '../harness/stats.js';

const Call = z.object({ event: z.string(), args: z.array(z.unknown()) });
const P = z.object({
  targets: z.array(z.object({ url: z.string(), host: z.string().optional() })).min(1),
  path: z.string(),
  tokens: z.array(z.string()).min(1),
  hostToken: z.string().optional(),
  participants: z.number().int().positive(),
  /** The host's call that opens the meeting (made first), then every participant's `join`. */
  hostJoin: Call,
  join: Call,
  send: Call,
  receive: z.string(),
  messages: z.number().int().positive(),
  intervalMs: z.number().nonnegative(),
  settleMs: z.number().int().nonnegative().default(2000),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);

function fill(args: unknown[], mark: string): unknown[] {
  return JSON.parse(JSON.stringify(args).replaceAll('$MARK', mark));
}

async function ackOk(socket: Socket, event: string, args: unknown[]): Promise<void> {
  const ack = await socket.timeout(10_000).emitWithAck(event, ...args);
  if (ack && typeof ack === 'object' && (ack as { ok?: boolean }).ok === false)
    throw new Error(`${event} refused: ${JSON.stringify(ack)}`);
}

async function main(): Promise<void> {
  const target = (i: number) => ({
    ...p.targets[i % p.targets.length]!,
    path: p.path,
    token: p.tokens[i % p.tokens.length],
  });
  const sockets = await connectMany(p.participants, target, 25);
  const [host] = await connectMany(1, () => ({ ...p.targets[0]!, path: p.path, token: p.hostToken ?? p.tokens[0] }));
  const sent = new Map<string, number>();
  const lat: number[] = [];
  let deliveries = 0;
  sockets.forEach((s) =>
    s.on(p.receive, (...payload: unknown[]) => {
      const t = now();
      const m = /"(bm-\d+)"|(bm-\d+)/.exec(JSON.stringify(payload));
      const mark = m?.[1] ?? m?.[2];
      const t0 = mark ? sent.get(mark) : undefined;
      if (t0 !== undefined) {
        deliveries++;
        lat.push(t - t0);
      }
    }),
  );
  await ackOk(host!, p.hostJoin.event, p.hostJoin.args);
  for (const s of sockets) await ackOk(s, p.join.event, p.join.args);
  tell('ready', { participants: sockets.length });
  for (let i = 0; i < p.messages; i++) {
    const mark = `bm-${i}`;
    sent.set(mark, now());
    await ackOk(host!, p.send.event, fill(p.send.args, mark));
    await sleep(p.intervalMs);
  }
  await sleep(p.settleMs);
  for (const s of [...sockets, host!]) s.disconnect();
  const expected = p.messages * p.participants;
  finish({ deliveries, expected, missing: expected - deliveries, ...latencyFigures(lat) });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
