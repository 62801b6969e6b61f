/**
 * Preloaded into a child node (LOOP_MONITOR=1, see child-node.ts): measures the node's event-loop
 * delay and, on SIGUSR2, prints the longest block since the previous signal as a log line
 * (`{"msg":"event loop","maxMs":...}`) and starts a new window. Reading it costs the node nothing
 * beyond the print, unlike scraping /metrics, whose own rendering would fall into the next window.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'event loop', maxMs: h.max / 1e6, samples: h.count })}\n`);
  h.reset();
});
