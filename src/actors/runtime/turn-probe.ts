import { runInContext, SpanKind, startSpan, type TraceContext } from '../../observability/tracing.js';

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

/** The actor a turn is of, and where it runs: what a probe's trace and a turn's span name. */
export interface TurnSubject {
  node: string;
  shard: number;
  epoch: number;
  actor: string;
  kind: string;
}

/**
 * One turn (`step`) with its instrumentation: in a span of the sender's trace when the message came with
 * one (decision 840: pushes and jobs of the turn continue it), and traced (start, end, writes) when a turn
 * probe is installed (tests only). `checkedAt` is the turn's start, taken before its lease check.
 */
export async function instrumentedTurn(
  subject: TurnSubject,
  trace: TraceContext | undefined,
  checkedAt: number,
  step: (traced?: TracedTurn) => Promise<unknown>,
): Promise<unknown> {
  if (!trace) return probedTurn(subject, checkedAt, step);
  const { kind, shard, epoch } = subject;
  const span = runInContext(trace, () =>
    startSpan(`actor turn ${kind}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'actor.kind': kind, 'actor.shard': shard, 'actor.epoch': epoch },
    }),
  );
  try {
    const value = await span.run(() => probedTurn(subject, checkedAt, step));
    span.end();
    return value;
  } catch (e) {
    span.end(e);
    throw e;
  }
}

async function probedTurn(
  subject: TurnSubject,
  checkedAt: number,
  step: (traced?: TracedTurn) => Promise<unknown>,
): Promise<unknown> {
  const probe = installed;
  if (!probe) return step();
  const t: TracedTurn = { probe, trace: { ...subject, start: checkedAt, writes: [] } };
  try {
    return await step(t);
  } finally {
    t.trace.end = probeClock();
    probe.turn(t.trace);
  }
}
