import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { LastSeenWriter, type LastSeenSink } from './last-seen-writer.js';

type Write = { tenant: string; entries: { userId: string; at: number }[] };

function recordingSink(fail = false): LastSeenSink & { writes: Write[]; next(): Promise<Write> } {
  const writes: Write[] = [];
  let waiter: ((w: Write) => void) | undefined;
  return {
    writes,
    next: () => new Promise((r) => (waiter = r)),
    async touchLastSeenMany(tenant, entries) {
      const w = { tenant, entries: entries.map((e) => ({ userId: String(e.userId), at: e.at.getTime() })) };
      writes.push(w);
      waiter?.(w);
      if (fail) throw new Error('database down');
    },
  };
}

describe('LastSeenWriter', () => {
  const [u1, u2] = [new Types.ObjectId().toHexString(), new Types.ObjectId().toHexString()];

  it('writes one entry per user with the latest time, one write per tenant', async () => {
    const sink = recordingSink();
    const w = new LastSeenWriter(sink, { intervalMs: 60_000 });
    w.note('a', u1, new Date(2000));
    w.note('a', u1, new Date(3000));
    w.note('a', u1, new Date(1000));
    w.note('a', u2, new Date(500));
    w.note('b', u1, new Date(700));
    w.note('a', 'guest:1', new Date(900));
    await w.flush();
    expect(sink.writes).toHaveLength(2);
    expect(sink.writes.find((x) => x.tenant === 'a')!.entries).toEqual([
      { userId: u1, at: 3000 },
      { userId: u2, at: 500 },
    ]);
    expect(sink.writes.find((x) => x.tenant === 'b')!.entries).toEqual([{ userId: u1, at: 700 }]);
    await w.flush();
    expect(sink.writes).toHaveLength(2);
  });

  it('flushes by itself after the interval', async () => {
    const sink = recordingSink();
    const w = new LastSeenWriter(sink, { intervalMs: 5 });
    const written = sink.next();
    w.note('a', u1, new Date(42));
    expect(await written).toEqual({ tenant: 'a', entries: [{ userId: u1, at: 42 }] });
  });

  it('logs a failed write instead of throwing, and keeps taking notes', async () => {
    const warnings: unknown[] = [];
    const logger = { warn: (o: unknown) => warnings.push(o) } as never;
    const sink = recordingSink(true);
    const w = new LastSeenWriter(sink, { intervalMs: 60_000, logger });
    w.note('a', u1);
    await expect(w.flush()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
    w.note('a', u2);
    await w.flush();
    expect(sink.writes.map((x) => x.entries[0]!.userId)).toEqual([u1, u2]);
  });

  it('writes what is pending on close and takes no notes after it', async () => {
    const sink = recordingSink();
    const w = new LastSeenWriter(sink, { intervalMs: 60_000 });
    w.note('a', u1, new Date(1));
    await w.close();
    w.note('a', u2, new Date(2));
    await w.flush();
    expect(sink.writes).toEqual([{ tenant: 'a', entries: [{ userId: u1, at: 1 }] }]);
  });
});
