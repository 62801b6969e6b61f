/**
 * Failover probe (B5): connected to a surviving node, opens a meeting whose actor lives on the
 * victim node, makes `writes` acknowledged notify calls (each bumps the meeting's seq), reports
 * `ready`, then starts a getMeetingDetails call every `probeEveryMs` (each with a long ack timeout).
 * After the harness says `killed` (with the wall-clock time of the SIGKILL), the first call started
 * after the kill that succeeds ends the probe: failover time = its ack time - kill time. The seq it
 * reads shows whether acknowledged writes survived and no write came from elsewhere.
 */
import { z } from 'zod';
import { params, finish, deadline, tell, waitFor, sleep } from './common.js';
import { connectSio } from './sio-client.js';

const P = z.object({
  url: z.string(),
  host: z.string().optional(),
  path: z.string(),
  token: z.string(),
  eventId: z.string(),
  writes: z.number().int().positive(),
  probeEveryMs: z.number().int().positive().default(50),
  callTimeoutMs: z.number().int().positive().default(30_000),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);

async function call(socket: Awaited<ReturnType<typeof connectSio>>, event: string, ...args: unknown[]): Promise<any> {
  const ack = await socket.timeout(p.callTimeoutMs).emitWithAck(event, ...args);
  if (!ack?.ok) throw new Error(`${event}: ${JSON.stringify(ack?.error ?? ack)}`);
  return ack.data;
}

async function main(): Promise<void> {
  const socket = await connectSio({ url: p.url, host: p.host, path: p.path, token: p.token });
  await call(socket, 'initEvent', { eventId: p.eventId });
  let lastSeq = 0;
  for (let i = 0; i < p.writes; i++)
    lastSeq = (await call(socket, 'notify', 'bench', { eventId: p.eventId, data: { i } })).seq;
  tell('ready', { lastSeq });
  let killAt: number | undefined;
  let done: { failoverMs: number; seqAfter: number; failedCalls: number } | undefined;
  let failed = 0;
  void waitFor('killed').then((m) => (killAt = Number(m.at)));
  while (!done) {
    const started = Date.now();
    call(socket, 'getMeetingDetails', { eventId: p.eventId }).then(
      (d: { seq: number }) => {
        if (killAt !== undefined && started >= killAt && !done)
          done = { failoverMs: Date.now() - killAt, seqAfter: d.seq, failedCalls: failed };
      },
      () => failed++,
    );
    await sleep(p.probeEveryMs);
  }
  const seqAfterWrite = (await call(socket, 'notify', 'bench', { eventId: p.eventId, data: { after: true } })).seq;
  socket.disconnect();
  finish({ ...done, lastSeq, seqAfterWrite });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
