/**
 * B12's accounting (bench/load/storm-accounting.ts, decision 1085): what counts as reconnected, resumed,
 * rejoined, missed and recovered, from recorded times, without running a storm.
 */
import { describe, expect, it } from '@jest/globals';
import { account, missedDeliveries, type Mark, type MemberRecord } from '../../bench/load/storm-accounting.js';

const KILL = 10_000;

function member(group: number, o: Partial<MemberRecord> = {}, received: [number, number][] = []): MemberRecord {
  return { group, victim: false, received: new Map(received), duplicates: 0, resyncs: 0, ...o };
}

describe('B12 storm accounting', () => {
  // Meeting 0: push 0 before the kill; push 1 sent and acknowledged while the victim was away; push 2
  // after it was back; push 3 failed (never acknowledged); push 4 the closing push.
  const marks: Mark[] = [
    { group: 0, sentAt: KILL - 1000, ackAt: KILL - 990 },
    { group: 0, sentAt: KILL + 200, ackAt: KILL + 210 },
    { group: 0, sentAt: KILL + 2000, ackAt: KILL + 2010 },
    { group: 0, sentAt: KILL + 2500 },
    { group: 0, sentAt: KILL + 5000, ackAt: KILL + 5010, last: true },
  ];
  const away = { victim: true, disconnectAt: KILL + 5, connectAt: KILL + 1500, flowingAt: KILL + 1520 };

  it('a victim that got the push it missed by replay is resumed when that push arrived, and rejoined after its join', () => {
    const victim = member(0, { ...away, rejoinAt: KILL + 1600 }, [
      [0, KILL - 985],
      [1, KILL + 1530],
      [2, KILL + 2015],
      [4, KILL + 5015],
    ]);
    const other = member(0, {}, [
      [0, KILL - 985],
      [1, KILL + 215],
      [2, KILL + 2015],
      [4, KILL + 5015],
    ]);
    const a = account({ members: [victim, other], marks, calls: [], killAt: KILL, stormEnd: KILL + 1600 });
    expect(a).toMatchObject({
      victims: 1,
      notResumed: 0,
      notRejoined: 0,
      reconnectedMs: [1500],
      resumedMs: [1530],
      rejoinedMs: [1600],
      pushesSent: 4,
      pushesExpected: 6,
      pushesMissed: 0,
      pushesWhileAway: 1,
      pushesRecovered: 1,
    });
  });

  it('a push a member never received is missed, victim or not; a victim without it is resumed when flowing', () => {
    const victim = member(0, { ...away, rejoinAt: KILL + 1600 }, [
      [0, KILL - 985],
      [2, KILL + 2015],
    ]);
    const other = member(0, {}, [[0, KILL - 985]]);
    const a = account({ members: [victim, other], marks, calls: [], killAt: KILL, stormEnd: KILL + 1600 });
    expect(a).toMatchObject({ pushesMissed: 3, pushesWhileAway: 1, pushesRecovered: 0, resumedMs: [1520] });
    expect(missedDeliveries(marks, [[victim, other]])).toBe(3);
  });

  it('a victim that never came back is neither resumed nor rejoined; one without its join is not rejoined', () => {
    const gone = member(0, { victim: true, disconnectAt: KILL + 5, duplicates: 2 });
    const noJoin = member(0, { ...away, resyncs: 1 });
    const a = account({ members: [gone, noJoin], marks: [], calls: [], killAt: KILL, stormEnd: KILL + 60_000 });
    expect(a).toMatchObject({
      victims: 2,
      notResumed: 1,
      notRejoined: 2,
      reconnectedMs: [1500],
      resumedMs: [1520],
      rejoinedMs: [],
      duplicates: 2,
      resyncs: 1,
    });
  });

  it('calls: before the kill are calm, up to the storm end are the storm, later ones neither', () => {
    const calls = [
      { start: KILL - 10, ms: 3, failover: false },
      { start: KILL + 10, ms: 3000, failover: true },
      { start: KILL + 20, ms: 40, failover: false },
      { start: KILL + 9000, ms: 5, failover: false },
    ];
    const a = account({ members: [], marks: [], calls, killAt: KILL, stormEnd: KILL + 5000 });
    expect(a.calmCallsMs).toEqual([3]);
    expect(a.stormCallsMs).toEqual([3000, 40]);
    expect(a.stormCallsElsewhereMs).toEqual([40]);
  });
});
