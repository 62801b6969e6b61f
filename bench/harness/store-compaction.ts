/**
 * Before a measured window on the embedded default: every chunk of the server's store rewritten that
 * another window's writes or a dropped collection left sparse (the launcher's `compactStore`, decision
 * 1181). H2 rewrites a sparse chunk only once it is older than the store's retention time (45 s), a
 * little each second and mostly while writes come in: a window that began within 45 s of another's
 * writes paid for their rewrite (B10's product rounds that followed a reference read 540-800 us of the
 * server's CPU per event against 260-280 in those a bare round preceded). So the window waits until
 * the last write is older than the retention time, and the command rewrites what is sparse; the window's
 * own writes are then the only ones whose rewrite it can meet. A server without the command (a real
 * MongoDB, the test server) is left as it is.
 */
import { MongoClient } from 'mongodb';
import { scaled } from './scale.js';

interface CompactReply {
  steps: number;
  retentionMs: number;
  msSinceLastWrite: number;
}

/** Waits for the store's chunks to age, then compacts; how long that took and the rewrite steps (0 and false where the server has no such command). */
export async function compactedStore(
  mongoUri: string,
  { timeoutMs = scaled(150_000, 10_000) } = {},
): Promise<{ waitedMs: number; steps: number; compacted: boolean }> {
  const t0 = performance.now();
  const client = await new MongoClient(mongoUri, { serverSelectionTimeoutMS: 10_000 }).connect();
  try {
    let steps = 0;
    for (;;) {
      let r: CompactReply;
      try {
        r = (await client.db('admin').command({ compactStore: 1, targetFillRate: 90 })) as unknown as CompactReply;
      } catch {
        return { waitedMs: performance.now() - t0, steps: 0, compacted: false };
      }
      steps += r.steps;
      const young = r.retentionMs - r.msSinceLastWrite;
      if (young < 0) return { waitedMs: performance.now() - t0, steps, compacted: true };
      if (performance.now() - t0 + young > timeoutMs)
        return { waitedMs: performance.now() - t0, steps, compacted: false };
      // A rule of time: chunks written in the last `retentionMs` are not rewritten until they are that old.
      await new Promise((done) => setTimeout(done, young + 250));
    }
  } finally {
    await client.close();
  }
}
