import type { BenchContext } from './types.js';
import { spawnLoad } from './load.js';
import { logFile } from './sides.js';

/** One client process of a hold: where its connections go and with which tokens. */
export interface IdleClientsTarget {
  url: string;
  host?: string;
  path: string;
  tokens: string[];
}

/**
 * Opens `perProcess` idle Socket.IO connections from one client process per target (bench/load/
 * idle-conns.ts), and resolves once every process holds its connections; `close` disconnects them and
 * answers how many were lost while held. B3 and B15 hold their connections with it.
 */
export async function openIdleClients(
  ctx: BenchContext,
  logName: string,
  targets: IdleClientsTarget[],
  opts: { perProcess: number; parallel: number; nofile: number; deadlineMs: number },
): Promise<{ connectS: number; held: number; close(): Promise<number> }> {
  const t0 = Date.now();
  const loads = targets.map((target, k) =>
    spawnLoad(
      'idle-conns',
      { ...target, conns: opts.perProcess, parallel: opts.parallel, deadlineMs: opts.deadlineMs },
      { logFile: logFile(ctx, `${logName}-${k}`), nofile: opts.nofile },
    ),
  );
  const close = async (): Promise<number> => {
    for (const l of loads) l.send({ type: 'close' });
    const closed = await Promise.allSettled(loads.map((l) => l.result));
    // Connections lost while held (before the harness closed them).
    return closed.reduce((sum, c) => {
      const r = c.status === 'fulfilled' ? (c.value as { conns?: number; stillConnected?: number }) : {};
      return sum + Math.max(0, (r.conns ?? 0) - (r.stillConnected ?? r.conns ?? 0));
    }, 0);
  };
  try {
    await Promise.all(
      loads.map((l) =>
        Promise.race([
          l.when('ready'),
          l.result.then((r: unknown) => {
            throw new Error(`load finished before ready: ${JSON.stringify(r)}`);
          }),
        ]),
      ),
    );
  } catch (e) {
    await close();
    throw e;
  }
  return { connectS: (Date.now() - t0) / 1000, held: opts.perProcess * loads.length, close };
}
