/**
 * Which queries the run's database servers answered by reading a whole collection while one benchmark
 * ran (the launcher's `indexUse` command, decisions 1161 and 1162): a diagnostic in the run's log, not a figure.
 * A server that does not know the command (a real MongoDB) is left out.
 */
import mongoose from 'mongoose';

interface IndexUse {
  exact: number;
  residual: number;
  secondary: number;
  scanned: number;
  scans: Record<string, number>;
}

async function indexUse(uri: string): Promise<IndexUse | null> {
  const conn = mongoose.createConnection(uri, { serverSelectionTimeoutMS: 3000 });
  try {
    const r = await conn.asPromise().then((c) => c.db!.admin().command({ indexUse: 1 }));
    return {
      exact: Number(r.exact),
      residual: Number(r.residual),
      secondary: Number(r.secondary ?? 0),
      scanned: Number(r.scanned),
      scans: (r.scans ?? {}) as Record<string, number>,
    };
  } catch {
    return null;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** Reads each server's counts now; `report()` logs what grew since, by server. */
export async function scanWatch(
  servers: Record<string, string>,
  log: (msg: string) => void,
): Promise<{ report(id: string): Promise<void> }> {
  // One entry per server (the embedded and the test server may be one), with the roles it serves.
  const roles = new Map<string, string[]>();
  for (const [role, uri] of Object.entries(servers)) roles.set(uri, [...(roles.get(uri) ?? []), role]);
  const before = new Map(await Promise.all([...roles.keys()].map(async (u) => [u, await indexUse(u)] as const)));
  return {
    async report(id) {
      for (const [uri, role] of roles) {
        const was = before.get(uri);
        if (!was) continue;
        const now = await indexUse(uri);
        if (!now) continue;
        const grown = Object.entries(now.scans)
          .map(([shape, n]) => [shape, n - (was.scans[shape] ?? 0)] as const)
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8);
        log(
          `  ${id}: ${role.join(' and ')} server answered ${now.exact - was.exact} queries by an index of their keys, ` +
            `${now.residual - was.residual} by a unique index and a residual filter, ` +
            `${now.secondary - was.secondary} by a non-unique index, scanned for ${now.scanned - was.scanned}` +
            (grown.length ? `; most scanned: ${grown.map(([s, n]) => `${s} ${n}`).join(', ')}` : ''),
        );
      }
    },
  };
}
