import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RecordLine } from '../../support/turn-recorder.js';

type Acquire = Extract<RecordLine, { t: 'acquire' }>;
type Turn = Extract<RecordLine, { t: 'turn' }>;
type Freeze = Extract<RecordLine, { t: 'freeze' }>;

/** What every node of a chaos run recorded (test/support/turn-recorder.ts), one file per incarnation. */
export interface Records {
  acquires: Acquire[];
  turns: Turn[];
  freezes: Freeze[];
}

/** Parses one node's record file (missing: nothing recorded yet). Every line is whole: appends are single writes. */
export function readRecordFile(file: string): RecordLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordLine);
}

export function readRecords(dir: string): Records {
  const lines = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readRecordFile(path.join(dir, f)));
  return {
    acquires: lines.filter((l): l is Acquire => l.t === 'acquire'),
    turns: lines.filter((l): l is Turn => l.t === 'turn'),
    freezes: lines.filter((l): l is Freeze => l.t === 'freeze'),
  };
}

/** Writes a node had refused by its store (what its actor_fenced_writes_total must count). */
export function refusedWrites(lines: RecordLine[]): number {
  return lines.reduce((n, l) => n + (l.t === 'turn' ? l.writes.filter((w) => w.accepted === false).length : 0), 0);
}

export interface SplitBrainReport {
  violations: string[];
  turns: number;
  writes: number;
  accepted: number;
  refused: number;
  /** Writes sent after a newer epoch of their shard had been acquired (each must be refused). */
  superseded: number;
  epochs: number;
}

function groupBy<T, K>(xs: T[], key: (x: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const x of xs) m.get(key(x))?.push(x) ?? m.set(key(x), [x]);
  return m;
}

/**
 * Checks the records for split brain, on one machine-wide monotonic clock. Sound whatever the load:
 * - an epoch is acquired by one node only, and a node runs turns only under epochs it acquired;
 * - turns of a shard start in epoch order: every turn of an older epoch started (its start is taken
 *   before its lease check) before any turn of a newer one (which starts after its acquire returned);
 * - no two turns of a shard under different epochs overlap with both writes accepted: an accepted
 *   write of an older epoch was sent before any turn of a newer epoch that also had a write accepted
 *   started (the store applied it while the older lease still held, so before the newer acquire);
 * - every write sent after a newer epoch of its shard was acquired was refused by the store.
 */
export function checkSplitBrain(r: Records): SplitBrainReport {
  const violations: string[] = [];
  const report = { turns: r.turns.length, writes: 0, accepted: 0, refused: 0, superseded: 0, epochs: 0 };
  const owner = new Map<string, string>();
  for (const a of r.acquires) {
    const k = `${a.shard}/${a.epoch}`;
    if (owner.has(k) && owner.get(k) !== a.node)
      violations.push(`shard ${a.shard} epoch ${a.epoch} acquired by ${owner.get(k)} and ${a.node}`);
    owner.set(k, a.node);
  }
  report.epochs = owner.size;
  const acquiresByShard = groupBy(r.acquires, (a) => a.shard);
  for (const [shard, turns] of groupBy(r.turns, (t) => t.shard)) {
    const newer = (acquiresByShard.get(shard) ?? []).sort((a, b) => a.at - b.at);
    for (const t of turns) {
      if (owner.get(`${shard}/${t.epoch}`) !== t.node)
        violations.push(`${t.node} ran ${t.actor} under shard ${shard} epoch ${t.epoch} it never acquired`);
      for (const w of t.writes) {
        report.writes++;
        if (w.accepted === true) report.accepted++;
        if (w.accepted === false) report.refused++;
        const by = newer.find((a) => a.epoch > w.epoch && a.at < w.sent);
        if (!by) continue;
        report.superseded++;
        if (w.accepted !== false)
          violations.push(
            `${t.node} wrote ${t.actor} (${w.store}) under epoch ${w.epoch} after ${by.node} acquired epoch ${by.epoch}: ${w.accepted === true ? 'accepted' : 'not refused'}`,
          );
      }
    }
    violations.push(...epochOrder(shard, turns));
  }
  return { violations, ...report };
}

/** Turn starts and accepted writes of one shard, epoch by epoch, never reach back into an older epoch's span. */
function epochOrder(shard: number, turns: Turn[]): string[] {
  const out: string[] = [];
  const epochs = [...groupBy(turns, (t) => t.epoch)].sort(([a], [b]) => a - b);
  let lastStart: Turn | undefined;
  let lastAccepted: { turn: Turn; sent: number } | undefined;
  for (const [epoch, ts] of epochs) {
    const first = ts.reduce((a, b) => (b.start < a.start ? b : a));
    if (lastStart && lastStart.start >= first.start) {
      out.push(
        `shard ${shard}: ${lastStart.node} started ${lastStart.actor} under epoch ${lastStart.epoch} at ${lastStart.start.toFixed(1)} ms, after ${first.node} started a turn under epoch ${epoch} at ${first.start.toFixed(1)} ms`,
      );
    }
    const writers = ts.filter((t) => t.writes.some((w) => w.accepted === true));
    const firstWriter = writers.length ? writers.reduce((a, b) => (b.start < a.start ? b : a)) : undefined;
    if (lastAccepted && firstWriter && lastAccepted.sent >= firstWriter.start) {
      out.push(
        `shard ${shard}: overlapping turns with both writes accepted: ${lastAccepted.turn.node} epoch ${lastAccepted.turn.epoch} [${lastAccepted.turn.start.toFixed(1)}, ${lastAccepted.sent.toFixed(1)}] and ${firstWriter.node} epoch ${epoch} from ${firstWriter.start.toFixed(1)}`,
      );
    }
    const latest = ts.reduce((a, b) => (b.start > a.start ? b : a));
    if (!lastStart || latest.start > lastStart.start) lastStart = latest;
    for (const t of writers) {
      for (const w of t.writes)
        if (w.accepted === true && (!lastAccepted || w.sent > lastAccepted.sent))
          lastAccepted = { turn: t, sent: w.sent };
    }
  }
  return out;
}
