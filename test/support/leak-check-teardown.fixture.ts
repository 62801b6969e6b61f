/**
 * The leak check's verdict on a file that leaves something running (test/integration/leak-check.test.ts):
 * this child makes the environment as jest does, tells it a test failed when FIXTURE_FAILED=1, leaves
 * what FIXTURE_LEAK says as the file's code would and tears the environment down. It prints
 * `threw: <message>` or `returned`; the environment's own report goes to stderr.
 *
 * FIXTURE_LEAK: `interval` (default: an interval in the file's globals), `thread` (an unreferenced worker
 * thread, as the QR renderer made one), `promise-timer` (a pending `node:timers/promises` timeout) or
 * `closed` (a thread and a promise timer, both ended before the teardown: nothing is left).
 */
import { createRequire } from 'node:module';
import LeakCheckEnvironment from './leak-check-environment.js';

// Holds the event loop as a jest worker's IPC channel does (made before the environment notes timers):
// the check waits on unreferenced timers, and an unreferenced thread holds nothing.
setInterval(() => undefined, 60_000);
const env = new LeakCheckEnvironment(
  { globalConfig: {}, projectConfig: { testEnvironmentOptions: {} } } as never,
  { testPath: `${process.cwd()}/a-file.test.ts`, docblockPragmas: {}, console } as never,
);
await env.setup();
if (process.env.FIXTURE_FAILED === '1') env.handleTestEvent({ name: 'test_done', test: { errors: [new Error('x')] } });
// The core modules as the file's code reads them once the environment is set up (jest's module registry
// hands a file the same module objects).
const core = createRequire(import.meta.url);
const { Worker } = core('node:worker_threads') as typeof import('node:worker_threads');
const timersPromises = core('node:timers/promises') as typeof import('node:timers/promises');
const THREAD = `require('node:worker_threads').parentPort.on('message', () => undefined);`;
const leak = process.env.FIXTURE_LEAK ?? 'interval';
if (leak === 'interval') {
  const g = env.global as unknown as { setInterval(fn: () => void, ms: number): unknown };
  g.setInterval(() => undefined, 1000);
} else if (leak === 'thread') {
  new Worker(THREAD, { eval: true }).unref();
} else if (leak === 'promise-timer') {
  void timersPromises.setTimeout(60_000);
} else if (leak === 'closed') {
  const w = new Worker(THREAD, { eval: true });
  w.unref();
  await w.terminate();
  const ac = new AbortController();
  const sleeping = timersPromises.setTimeout(60_000, undefined, { signal: ac.signal }).catch(() => undefined);
  ac.abort();
  await sleeping;
  await timersPromises.setTimeout(1);
}
try {
  await env.teardown();
  process.stdout.write('returned\n');
} catch (e) {
  process.stdout.write(`threw: ${(e as Error).message}\n`);
}
process.exit(0);
