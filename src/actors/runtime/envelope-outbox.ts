import type { RedisClient } from '../../data/redis.js';
import { PUSH_ENVELOPES } from './scripts.js';

/** Most values per script call (Lua's unpack has a stack limit). */
const CHUNK = 1000;

interface Batch {
  values: string[];
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

/**
 * Coalesces envelopes bound for the same Redis list: whatever is sent before the current microtask
 * queue drains goes out as one `LPUSH key v1 v2 ...` with its `PEXPIRE` in one script call, instead
 * of a transaction per envelope. Flushing on a microtask (not setImmediate) keeps a lone envelope's latency
 * unchanged. LPUSH of several values keeps their order for the reader's right-hand pops (FIFO).
 */
export class EnvelopeOutbox {
  private batches = new Map<string, Batch>();
  private scheduled = false;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly ttlMs: number,
  ) {}

  /** Resolves once the envelope is in the list; rejects when Redis refused or was unreachable. */
  send(key: string, env: unknown): Promise<void> {
    let batch = this.batches.get(key);
    if (!batch) {
      batch = { values: [], waiters: [] };
      this.batches.set(key, batch);
    }
    batch.values.push(JSON.stringify(env));
    const done = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => void this.flush());
    }
    return done;
  }

  /** Writes whatever is queued now; resolves when every write so far has settled. */
  flush(): Promise<void> {
    this.scheduled = false;
    const batches = this.batches;
    this.batches = new Map();
    const writes = [...batches].map(([key, b]) =>
      this.write(key, b.values).then(
        () => b.waiters.forEach((w) => w.resolve()),
        (err) => b.waiters.forEach((w) => w.reject(err)),
      ),
    );
    this.flushing = Promise.all([this.flushing, ...writes]).then(() => undefined);
    return this.flushing;
  }

  private async write(key: string, values: string[]): Promise<void> {
    for (let i = 0; i < values.length; i += CHUNK) {
      await PUSH_ENVELOPES.run(this.redis, [key], [this.ttlMs, ...values.slice(i, i + CHUNK)]);
    }
  }
}
