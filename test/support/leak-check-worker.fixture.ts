/**
 * A stand-in for a jest worker around the leak check's worker report (test/integration/leak-check.test.ts):
 * a forked child (IPC channel) that loads the environment module, listens for messages as jest-worker's
 * child does, and on 'end' removes its listener, which is how jest asks a worker to end. FIXTURE_HOLD
 * says what it then leaves: `server` (a listening server: the worker cannot end), `memory` (nothing
 * held, 96 MB more resident) or nothing.
 */
import net from 'node:net';

await import('./leak-check-environment.js');

const onMessage = (m: unknown) => {
  if (m === 'end') process.off('message', onMessage);
};
process.on('message', onMessage);
const hold = process.env.FIXTURE_HOLD;
if (hold === 'server') net.createServer().listen(0, '127.0.0.1');
const kept: Buffer[] = [];
if (hold === 'memory') kept.push(Buffer.alloc(96 * 1048576, 1));
(globalThis as { kept?: Buffer[] }).kept = kept;
process.send!('ready');
