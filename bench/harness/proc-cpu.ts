import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time of other processes on this machine (Linux /proc): what a round cost each process, which
 * stays comparable when wall-clock rates move with the machine's load.
 */

let ticks: number | undefined;
const clockTicks = () => (ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

/** CPU seconds (user and system) the process has used so far; undefined where /proc cannot tell. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's closing parenthesis: state is field 3, utime field 14, stime field 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return undefined;
  }
}

/** The process listening on a loopback TCP port (`ss`), undefined when none is found. */
export function listenerPid(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The CPU seconds a set of processes use while `work` runs (-1 for one /proc cannot read). */
export async function cpuDuring<T>(
  pids: Record<string, number | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> }> {
  const read = () => Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, p ? cpuSeconds(p) : undefined]));
  const before = read();
  const result = await work();
  const after = read();
  const cpu: Record<string, number> = {};
  for (const k of Object.keys(pids)) {
    const b = before[k];
    const a = after[k];
    cpu[k] = a !== undefined && b !== undefined ? a - b : -1;
  }
  return { result, cpu };
}
