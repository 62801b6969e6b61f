/**
 * An optional observer of the actor runtime's ownership and writes, so a test can prove from what each
 * node actually did that no two owners of a shard ever wrote at once (docs/reliability.md, chaos run).
 * Nothing is recorded unless a probe is installed; production never installs one, so a turn pays one
 * property read. Times come from `probeClock()`: CLOCK_MONOTONIC, which on Linux is one clock for every
 * process of the machine, so records of several node processes can be compared with each other.
 */
export interface TurnProbe {
  /** This node won the shard's lease under `epoch`; `sentAt`/`at` bracket the acquire script. */
  acquired(node: string, shard: number, epoch: number, sentAt: number, at: number): void;
  /** Called synchronously just before a write leaves for its store (a test may freeze the process here). */
  beforeWrite(turn: TurnTrace, write: WriteTrace): void;
  /** A turn finished (succeeded, failed or was fenced). */
  turn(turn: TurnTrace): void;
}

/** One write a turn attempted under the epoch its node believed it held. */
export interface WriteTrace {
  /** `snapshot`: the turn's fenced write-through to Redis; `external`: a fencedWrite (e.g. MongoDB). */
  store: 'snapshot' | 'external';
  epoch: number;
  sent: number;
  done?: number;
  /** True when the store applied it, false when it was fenced, undefined when it failed otherwise. */
  accepted?: boolean;
}

/** One actor turn as run on one node. */
export interface TurnTrace {
  node: string;
  shard: number;
  epoch: number;
  actor: string;
  kind: string;
  start: number;
  end?: number;
  writes: WriteTrace[];
}

let installed: TurnProbe | undefined;

/** Installs (or with no argument removes) the probe of every actor system of this process. */
export function installTurnProbe(probe?: TurnProbe): void {
  installed = probe;
}

export function turnProbe(): TurnProbe | undefined {
  return installed;
}

/** Milliseconds on CLOCK_MONOTONIC (process.hrtime), comparable across the processes of one machine. */
export function probeClock(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** A turn being traced, and the probe to report it to. */
export interface TracedTurn {
  probe: TurnProbe;
  trace: TurnTrace;
}

/**
 * Runs one write of a traced turn: announces it, stamps when it was sent and answered, and records
 * whether the store took it (`outcome` reads the result or the error).
 */
export async function tracedWrite<T>(
  t: TracedTurn,
  store: WriteTrace['store'],
  run: () => Promise<T>,
  outcome: (r: { value?: T; error?: unknown }) => boolean | undefined,
): Promise<T> {
  const w: WriteTrace = { store, epoch: t.trace.epoch, sent: 0 };
  t.trace.writes.push(w);
  t.probe.beforeWrite(t.trace, w);
  w.sent = probeClock();
  try {
    const value = await run();
    w.accepted = outcome({ value });
    return value;
  } catch (error) {
    w.accepted = outcome({ error });
    throw error;
  } finally {
    w.done = probeClock();
  }
}
