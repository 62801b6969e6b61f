import type { RedisClient } from '../../data/redis.js';
import { PUSH_ENVELOPES } from './scripts.js';

/** Most values per script call (Lua's unpack has a stack limit). */
const CHUNK = 1000;

interface Batch {
  values: string[];
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

/**
 * Coalesces envelopes bound for the same Redis list into one `LPUSH key v1 v2 ...` with its `PEXPIRE`
 * in one script call, instead of a transaction per envelope. A loop turn's first envelope leaves on a
 * microtask (with whatever joins it before the microtask queue drains), so a lone envelope waits for
 * nothing; the envelopes sent later in the same turn of the event loop leave together in its check
 * phase (decision 1142). A node that relays a poll's worth of hub calls to another node then writes
 * them in one or two script calls, not one per call: each write to Redis is a syscall that wakes the
 * server, the cost that dominated the sender's profile. LPUSH of several values keeps their order for
 * the reader's right-hand pops (FIFO).
 */
export class EnvelopeOutbox {
  private batches = new Map<string, Batch>();
  private scheduled = false;
  /** A flush is queued for this loop turn's check phase: envelopes sent until then wait for it. */
  private turnArmed = false;
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
    if (this.scheduled) return done;
    this.scheduled = true;
    if (!this.turnArmed) {
      // The turn's first envelope: out on a microtask; the rest of the turn's at its check phase.
      this.turnArmed = true;
      setImmediate(this.endTurn);
      queueMicrotask(() => void this.flush());
    }
    return done;
  }

  private readonly endTurn = (): void => {
    this.turnArmed = false;
    if (this.scheduled) void this.flush();
  };

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
