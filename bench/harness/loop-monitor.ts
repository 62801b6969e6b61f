/**
 * The event-loop blocks of the process it runs in (a product node under benchmark B13), read and reset
 * window by window over IPC: the longest wall-clock delay (perf_hooks' histogram), which on a loaded
 * machine also counts the time the process waited for a core, and the longest CPU-backed block: a 2 ms
 * ticker notes each gap between its ticks and the process's CPU time over that gap; the block is the
 * smaller of the two (a descheduled process gains no CPU time; CPU time of helper threads cannot make a
 * block longer than the gap). The second is the node's own doing, whatever else runs on the machine.
 * Started on the first read, so no other benchmark pays for the ticker.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const TICK_MS = 2;

export interface LoopWindow {
  /** Longest wall-clock event-loop delay in the window (ms). */
  wallMaxMs: number;
  /** Longest block of the process's own computing in the window (ms). */
  cpuMaxMs: number;
}

let state: { h: IntervalHistogram; cpuMax: number } | undefined;

function start(): NonNullable<typeof state> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const s = { h, cpuMax: 0 };
  let lastAt = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const block = Math.min(now - lastAt - TICK_MS, (cpu.user + cpu.system) / 1000);
    if (block > s.cpuMax) s.cpuMax = block;
    lastAt = now;
    lastCpu = process.cpuUsage();
  }, TICK_MS).unref();
  return s;
}

/** The window since the previous call (the first call starts measuring and returns zeros), then a new one. */
export function loopWindow(): LoopWindow {
  if (!state) {
    state = start();
    return { wallMaxMs: 0, cpuMaxMs: 0 };
  }
  const w = { wallMaxMs: state.h.max / 1e6, cpuMaxMs: state.cpuMax };
  state.h.reset();
  state.cpuMax = 0;
  return w;
}
