/**
 * What B12's storm generator (storm.ts) records and how a round's figures come out of it (decision 1085).
 * Pure: the generator and the harness's tests share it. Times are wall-clock milliseconds.
 */

/** One client as the storm saw it. */
export interface MemberRecord {
  /** Its meeting (index into the process's meetings). */
  group: number;
  /** Connected to the killed node when the storm began. */
  victim: boolean;
  disconnectAt?: number;
  /** Its next connection after losing the killed node. */
  connectAt?: number;
  /**
   * When pushes flow to it again on that connection: product, its `pushStreams` (where its stream
   * continues; the replay follows); bare, its room joined again.
   */
  flowingAt?: number;
  /** Its meeting joined again: product, the SDK's joinEvent acknowledged; bare, the room join. */
  rejoinAt?: number;
  /** Mark -> when it arrived (first time). */
  received: Map<number, number>;
  duplicates: number;
  resyncs: number;
}

/** One notify the host sent: its meeting, when, and when it was acknowledged (never, if it failed). */
export interface Mark {
  group: number;
  sentAt: number;
  ackAt?: number;
  /** The meeting's closing push: not counted, it tells that everything before it has arrived. */
  last?: boolean;
}

/** A hub call: when it started, how long until its acknowledgement, and whether its meeting's actor moved. */
export interface CallSample {
  start: number;
  ms: number;
  failover: boolean;
}

export const isResumed = (m: MemberRecord): boolean => m.connectAt !== undefined && m.flowingAt !== undefined;
export const isRejoined = (m: MemberRecord): boolean => isResumed(m) && m.rejoinAt !== undefined;

/** Acknowledged pushes a member of the meeting never received, over every meeting (closing pushes left out). */
export function missedDeliveries(marks: readonly Mark[], byGroup: readonly MemberRecord[][]): number {
  let miss = 0;
  for (let i = 0; i < marks.length; i++) {
    const mk = marks[i]!;
    if (mk.ackAt === undefined || mk.last) continue;
    for (const m of byGroup[mk.group] ?? []) if (!m.received.has(i)) miss++;
  }
  return miss;
}

export interface StormAccount {
  victims: number;
  notResumed: number;
  notRejoined: number;
  /** Per victim that came back: kill -> connected again; -> resumed; -> also in its meeting again. */
  reconnectedMs: number[];
  resumedMs: number[];
  rejoinedMs: number[];
  pushesSent: number;
  pushesExpected: number;
  pushesMissed: number;
  pushesWhileAway: number;
  pushesRecovered: number;
  duplicates: number;
  resyncs: number;
  stormCallsMs: number[];
  stormCallsElsewhereMs: number[];
  calmCallsMs: number[];
}

/**
 * A process's round: `members` (every client, victims flagged), the host's `marks`, the `calls` timed,
 * the kill time and the storm's end (every victim back in its meeting, or the storm's limit).
 *
 * - reconnected: the victim's next connection; resumed: pushes flow to it again and every push
 *   acknowledged to the host before it reconnected, that it received, has arrived (one it never
 *   received is counted as missed, not waited for); rejoined: also in its meeting again.
 * - missed: an acknowledged push x a member of its meeting that never received it, victims or not.
 * - while away: pushes sent after a victim's disconnect and acknowledged before its reconnection,
 *   which only a replay can bring it; recovered: those it received.
 * - calls during the storm: started between the kill and the storm's end; calm: started before the kill.
 */
export function account(r: {
  members: readonly MemberRecord[];
  marks: readonly Mark[];
  calls: readonly CallSample[];
  killAt: number;
  stormEnd: number;
}): StormAccount {
  const byGroup: MemberRecord[][] = [];
  for (const m of r.members) (byGroup[m.group] ??= []).push(m);
  const victims = r.members.filter((m) => m.victim);
  const out: StormAccount = {
    victims: victims.length,
    notResumed: 0,
    notRejoined: 0,
    reconnectedMs: [],
    resumedMs: [],
    rejoinedMs: [],
    pushesSent: r.marks.filter((mk) => !mk.last).length,
    pushesExpected: 0,
    pushesMissed: missedDeliveries(r.marks, byGroup),
    pushesWhileAway: 0,
    pushesRecovered: 0,
    duplicates: r.members.reduce((a, m) => a + m.duplicates, 0),
    resyncs: r.members.reduce((a, m) => a + m.resyncs, 0),
    stormCallsMs: [],
    stormCallsElsewhereMs: [],
    calmCallsMs: [],
  };
  for (const mk of r.marks)
    if (mk.ackAt !== undefined && !mk.last) out.pushesExpected += byGroup[mk.group]?.length ?? 0;
  for (const m of victims) {
    for (let i = 0; i < r.marks.length; i++) {
      const { group, sentAt, ackAt, last } = r.marks[i]!;
      if (group !== m.group || ackAt === undefined || last || m.disconnectAt === undefined) continue;
      if (sentAt < m.disconnectAt || (m.connectAt !== undefined && ackAt > m.connectAt)) continue;
      out.pushesWhileAway++;
      if (m.received.has(i)) out.pushesRecovered++;
    }
    if (m.connectAt !== undefined) out.reconnectedMs.push(m.connectAt - r.killAt);
    if (!isResumed(m)) {
      out.notResumed++;
      out.notRejoined++;
      continue;
    }
    const connectAt = m.connectAt!;
    let resumedAt = Math.max(connectAt, m.flowingAt!);
    for (const [mark, at] of m.received) {
      const ackAt = r.marks[mark]?.ackAt;
      if (ackAt !== undefined && ackAt <= connectAt && at > resumedAt) resumedAt = at;
    }
    out.resumedMs.push(resumedAt - r.killAt);
    if (m.rejoinAt === undefined) out.notRejoined++;
    else out.rejoinedMs.push(Math.max(resumedAt, m.rejoinAt) - r.killAt);
  }
  for (const c of r.calls) {
    if (c.start < r.killAt) out.calmCallsMs.push(c.ms);
    else if (c.start <= r.stormEnd) {
      out.stormCallsMs.push(c.ms);
      if (!c.failover) out.stormCallsElsewhereMs.push(c.ms);
    }
  }
  return out;
}
