/**
 * Preloaded into a child node (LOOP_MONITOR=1, see child-node.ts): measures the node's event-loop
 * blocks and, on SIGUSR2, prints the longest since the previous signal as a log line
 * (`{"msg":"event loop","maxMs":...,"cpuMaxMs":...}`) and starts a new window. Reading it costs the node
 * nothing beyond the print, unlike scraping /metrics, whose own rendering would fall into the next window.
 *
 * `maxMs` is the wall-clock delay (perf_hooks' histogram): on a loaded machine it also counts the time the
 * process waited for a core. `cpuMaxMs` counts only what the process itself computed during a block: a
 * 2 ms ticker notes each gap between its ticks and the process's CPU time over that gap; the block is the
 * smaller of the two (a descheduled process gains no CPU time; CPU time of helper threads cannot make a
 * block longer than the gap). That is the node's own doing, whatever else runs on the machine.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const TICK_MS = 2;
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
let cpuMax = 0;
let lastAt = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const gap = now - lastAt - TICK_MS;
  const block = Math.min(gap, (cpu.user + cpu.system) / 1000);
  if (block > cpuMax) cpuMax = block;
  lastAt = now;
  lastCpu = process.cpuUsage();
}, TICK_MS).unref();
process.on('SIGUSR2', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'event loop', maxMs: h.max / 1e6, cpuMaxMs: cpuMax, samples: h.count })}\n`,
  );
  h.reset();
  cpuMax = 0;
});
