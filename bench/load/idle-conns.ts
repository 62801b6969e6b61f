/**
 * Idle connections: opens `conns` authenticated Socket.IO clients, reports `ready`, holds them
 * (no traffic) until the harness says `close` (or the deadline), then disconnects and reports.
 */
import { z } from 'zod';
import { params, finish, deadline, tell, waitFor, now } from './common.js';
import { connectMany } from './sio-client.js';

const P = z.object({
  url: z.string(),
  path: z.string(),
  host: z.string().optional(),
  tokens: z.array(z.string()).default([]),
  conns: z.number().int().positive(),
  parallel: z.number().int().positive().default(50),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);

async function main(): Promise<void> {
  const t0 = now();
  const token = (i: number) => (p.tokens.length ? p.tokens[i % p.tokens.length] : undefined);
  const sockets = await connectMany(
    p.conns,
    (i) => ({ url: p.url, path: p.path, host: p.host, token: token(i) }),
    p.parallel,
  );
  let dropped = 0;
  for (const s of sockets) s.on('disconnect', () => dropped++);
  tell('ready', { conns: sockets.length, connectMs: now() - t0 });
  await waitFor('close');
  const stillConnected = sockets.filter((s) => s.connected).length;
  for (const s of sockets) s.disconnect();
  finish({ conns: sockets.length, stillConnected, dropped, connectMs: now() - t0 });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
