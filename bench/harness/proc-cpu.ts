import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { scaled } from './scale.js';

/**
 * CPU time of other processes on this machine (Linux /proc): what a round cost each process, which
 * stays comparable when wall-clock rates move with the machine's load.
 */

let ticks: number | undefined;
const clockTicks = () => (ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

/**
 * CPU seconds (user and system) the process has used so far; of its main thread alone (the JavaScript
 * thread of a Node.js process) with `mainThread`. Undefined where /proc cannot tell.
 */
export function cpuSeconds(pid: number, mainThread = false): number | undefined {
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    // After the command's closing parenthesis: state is field 3, utime field 14, stime field 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return undefined;
  }
}

/**
 * The CPU seconds a set of processes use while `work` runs (-1 for one /proc cannot read); a process
 * given as `{ main: pid }` counts its main thread alone.
 */
export async function cpuDuring<T>(
  pids: Record<string, number | { main: number } | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> }> {
  const of = (p: number | { main: number } | undefined) =>
    p === undefined ? undefined : typeof p === 'number' ? cpuSeconds(p) : cpuSeconds(p.main, true);
  const read = () => Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, of(p)]));
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

/**
 * The CPU seconds of groups of processes sampled every `everyMs` from /proc, so that a window known only
 * afterwards (a storm's, until its last client came back) can be read: `between` interpolates each
 * group's total linearly between the samples around the window's ends. A process that exits keeps its
 * last reading.
 */
export class CpuTimeline {
  private readonly samples: { at: number; cpu: Record<string, number> }[] = [];
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly groups: Record<string, (number | undefined)[]>,
    everyMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): void {
    const cpu: Record<string, number> = {};
    for (const [group, pids] of Object.entries(this.groups)) {
      let sum = 0;
      for (const pid of pids) {
        if (pid === undefined) continue;
        const s = cpuSeconds(pid);
        if (s !== undefined) this.last.set(pid, s);
        sum += this.last.get(pid) ?? 0;
      }
      cpu[group] = sum;
    }
    this.samples.push({ at: Date.now(), cpu });
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  /** CPU seconds each group used between two wall-clock times (clamped to the sampled span). */
  between(from: number, to: number): Record<string, number> {
    const at = (t: number, group: string): number => {
      const s = this.samples;
      if (t <= s[0]!.at) return s[0]!.cpu[group]!;
      for (let i = 1; i < s.length; i++) {
        if (t <= s[i]!.at) {
          const a = s[i - 1]!;
          const b = s[i]!;
          const f = b.at === a.at ? 1 : (t - a.at) / (b.at - a.at);
          return a.cpu[group]! + f * (b.cpu[group]! - a.cpu[group]!);
        }
      }
      return s[s.length - 1]!.cpu[group]!;
    };
    return Object.fromEntries(Object.keys(this.groups).map((g) => [g, at(to, g) - at(from, g)]));
  }
}

/**
 * Waits until a process has been quiet (under `maxCores` of CPU over one `windowMs` window), at most
 * `timeoutMs` (30 s; 3 s in a quick run): a side's measured window then starts without the tail of what
 * ran before it (a database server's collector and page compaction after another side's writes, or
 * after a dropped collection; decision 1179). Returns how long it waited and whether it got quiet
 * (false: timed out, or /proc cannot tell).
 */
export async function untilQuiet(
  pid: number | undefined,
  { maxCores = 0.15, windowMs = 1000, timeoutMs = scaled(30_000, 3000) } = {},
): Promise<{ waitedMs: number; quiet: boolean }> {
  const t0 = performance.now();
  if (!pid) return { waitedMs: 0, quiet: false };
  let before = cpuSeconds(pid);
  while (before !== undefined && performance.now() - t0 < timeoutMs) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = cpuSeconds(pid);
    if (now === undefined) break;
    if (now - before < (maxCores * windowMs) / 1000) return { waitedMs: performance.now() - t0, quiet: true };
    before = now;
  }
  return { waitedMs: performance.now() - t0, quiet: false };
}
