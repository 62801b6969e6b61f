// Who holds a loopback TCP port, from `ss` (iproute2): the listening process, and how many connections
// its side holds open. Used by scripts/services.mjs (a test server's clients) and the benchmarks (a
// server's pid for its CPU).
import { execFileSync } from 'node:child_process';

function ss(args) {
  try {
    return execFileSync('ss', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** The process listening on a loopback TCP port, undefined when none is found (or `ss` is missing). */
export function listenerPid(port) {
  const m = /pid=(\d+)/.exec(ss(['-ltnpH', `sport = :${port}`]) ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Connections established to `port` (the listener's side of each), undefined when `ss` cannot tell. */
export function connectionsTo(port) {
  const out = ss(['-tnH', 'state', 'established', `sport = :${port}`]);
  return out === undefined ? undefined : out.split('\n').filter((l) => l.trim()).length;
}
