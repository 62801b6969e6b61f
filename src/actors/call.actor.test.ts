import { describe, it, expect } from '@jest/globals';
import { callActor, type CallActorDeps } from './call.actor.js';
import type { CallState } from './call.schema.js';
import type { Caller } from '../kernel/caller.js';
import { turnHarness } from '../../test/support/turn-harness.js';

const T = 'acme';
const who = (userId: string, role = 'clinician'): Caller => ({ userId, username: userId, role, permissions: [] });
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const C = 'c'.repeat(24);

function callDeps(records: CallState[], online: Set<string> = new Set([A, B, C])): CallActorDeps {
  return {
    ringTimeoutMs: 1000,
    presenceCheckMs: 60_000,
    onlineUserIds: async (_t, ids) => new Set(ids.filter((id) => online.has(id))),
    activeUserIds: async (_t, ids) => new Set(ids.filter((id) => [A, B, C].includes(id))),
    saveRecord: async (_t, call) => {
      records.push(structuredClone(call));
      return true;
    },
    recordedStatus: async (_t, id) => records.findLast((r) => r.callId === id)?.status,
  };
}

describe('call actor turns', () => {
  const callId = '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d';

  it('rings the callee, connects on accept and ends for every party', async () => {
    const records: CallState[] = [];
    const h = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    const info = await h.send({
      type: 'init',
      caller: who(A),
      callerName: 'Alice',
      req: { calleeIds: [B], callType: 'video' },
    });
    expect(info.status).toBe('ringing');
    expect(h.emitted[0]).toMatchObject({ rooms: [`user:${T}:${B}`], event: 'onNewCall' });
    expect(h.timers.has('ring')).toBe(true);
    expect((await h.send({ type: 'accept', caller: who(B) })).status).toBe('active');
    expect(h.timers.has('ring')).toBe(false);
    const ended = await h.send({ type: 'end', caller: who(B) });
    expect(ended.status).toBe('ended');
    const end = h.emitted.find((e) => e.event === 'onEndCall')!;
    expect(end.rooms.sort()).toEqual([`user:${T}:${A}`, `user:${T}:${B}`].sort());
    expect(records.map((r) => r.status)).toEqual(['ringing', 'active', 'ended']);
  });

  it('retires the snapshot of a call that ended, was missed or cancelled, and only then', async () => {
    const h = turnHarness(callActor(callDeps([])), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B, C], callType: 'video' } });
    expect(h.retired).toBeUndefined();
    await h.send({ type: 'accept', caller: who(B) });
    await h.send({ type: 'addParticipant', caller: who(B), userId: C });
    expect(h.retired).toBeUndefined();
    await h.send({ type: 'end', caller: who(A) });
    expect(h.retired).toEqual({});
    expect(h.timers.size).toBe(0);

    for (const [how, status] of [
      [(h2: typeof h) => h2.fire('ring'), 'missed'],
      [(h2: typeof h) => h2.send({ type: 'cancel', caller: who(A) }), 'cancelled'],
      [(h2: typeof h) => h2.send({ type: 'cancel', caller: who(B) }), 'ended'],
    ] as const) {
      const other = turnHarness(callActor(callDeps([])), { tenant: T, kind: 'call', id: callId });
      await other.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'audio' } });
      expect(other.retired).toBeUndefined();
      expect((await how(other)).status).toBe(status);
      expect(other.retired).toEqual({});
      expect(other.timers.size).toBe(0);
    }
  });

  it('answers a call whose snapshot is gone as unknown, and never places a finished call again', async () => {
    const records: CallState[] = [];
    const first = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    await first.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'video' } });
    await first.send({ type: 'end', caller: who(A) });
    expect(records.at(-1)!.status).toBe('cancelled');
    // Its snapshot expired: the actor starts afresh, the call record stays the history.
    const h = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    for (const msg of [
      { type: 'accept', caller: who(B) },
      { type: 'end', caller: who(A) },
      { type: 'cancel', caller: who(B) },
      { type: 'addParticipant', caller: who(A), userId: C },
    ] as const)
      await expect(h.send(msg)).rejects.toMatchObject({ code: 'call_not_found' });
    expect(await h.send({ type: 'members' })).toEqual({ status: 'idle', memberIds: [] });
    for (const caller of [who(A), who(B)])
      await expect(
        h.send({ type: 'init', caller, callerName: 'A', req: { calleeIds: [C], callType: 'video' } }),
      ).rejects.toMatchObject({ code: 'conflict' });
    expect(records.map((r) => r.status)).toEqual(['ringing', 'cancelled']);
    expect(h.emitted).toEqual([]);
    expect(h.timers.size).toBe(0);
    expect(h.state.status).toBe('idle');
  });

  it('turns an unanswered call into a missed call when the ring timer fires', async () => {
    const records: CallState[] = [];
    const h = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'Alice', req: { calleeIds: [B], callType: 'audio' } });
    expect((await h.fire('ring')).status).toBe('missed');
    expect(h.emitted.at(-1)).toMatchObject({ event: 'onEndCall', payload: { status: 'missed' } });
  });

  it('refuses strangers, unknown callees and late transitions with coded errors', async () => {
    const h = turnHarness(callActor(callDeps([])), { tenant: T, kind: 'call', id: callId });
    await expect(
      h.send({
        type: 'init',
        caller: who(A),
        callerName: 'A',
        req: { calleeIds: ['d'.repeat(24)], callType: 'video' },
      }),
    ).rejects.toMatchObject({ code: 'user_not_found' });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'video' } });
    await expect(h.send({ type: 'accept', caller: who(C) })).rejects.toMatchObject({ code: 'call_not_found' });
    await h.send({ type: 'cancel', caller: who(A) });
    await expect(h.send({ type: 'accept', caller: who(B) })).rejects.toMatchObject({ code: 'invalid_state' });
    expect(h.state.status).toBe('cancelled');
  });

  it('adds a participant who then gets onNewCall', async () => {
    const h = turnHarness(callActor(callDeps([])), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'video' } });
    await h.send({ type: 'accept', caller: who(B) });
    const r = await h.send({ type: 'addParticipant', caller: who(B), userId: C });
    expect(r.invitedIds).toContain(C);
    expect(h.emitted.filter((e) => e.event === 'onNewCall').at(-1)!.rooms).toEqual([`user:${T}:${C}`]);
    expect((await h.send({ type: 'members' })).memberIds.sort()).toEqual([A, B, C].sort());
  });

  it('ends an active call once fewer than two of its parties are connected at two checks in a row', async () => {
    const records: CallState[] = [];
    const online = new Set([A, B, C]);
    const h = turnHarness(callActor(callDeps(records, online)), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B, C], callType: 'video' } });
    expect(h.timers.has('presence')).toBe(false);
    await h.send({ type: 'accept', caller: who(B) });
    await h.send({ type: 'accept', caller: who(C) });
    expect(h.timers.get('presence')).toMatchObject({ delayMs: 60_000 });
    // All there: the call goes on and checks again.
    expect((await h.fire('presence')).status).toBe('active');
    // A blip of B's at one check, back at the next: still on.
    online.delete(B);
    expect((await h.fire('presence')).status).toBe('active');
    online.add(B);
    expect((await h.fire('presence')).status).toBe('active');
    // C gone for two checks: two parties are left, the call goes on; then A and B away at two checks too.
    online.delete(C);
    await h.fire('presence');
    expect((await h.fire('presence')).status).toBe('active');
    online.delete(A);
    expect((await h.fire('presence')).status).toBe('active');
    h.emitted.length = 0;
    const ended = await h.fire('presence');
    expect(ended).toMatchObject({ status: 'ended', endReason: 'disconnected' });
    expect(ended).not.toHaveProperty('awayIds');
    expect(records.at(-1)).toMatchObject({ status: 'ended' });
    expect(h.retired).toEqual({});
    expect(h.timers.size).toBe(0);
    const push = h.emitted.find((e) => e.event === 'onEndCall')!;
    expect(push.payload).toMatchObject({ callId, status: 'ended', reason: 'disconnected' });
    expect(push.rooms.sort()).toEqual([A, B, C].map((id) => `user:${T}:${id}`).sort());
  });

  it('leaves a ringing or finished call to its own ends', async () => {
    const online = new Set<string>();
    const h = turnHarness(callActor(callDeps([], online)), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'audio' } });
    expect((await h.send({ type: 'presenceCheck' })).status).toBe('ringing');
    expect((await h.send({ type: 'presenceCheck' })).status).toBe('ringing');
    await h.send({ type: 'end', caller: who(A) });
    expect((await h.send({ type: 'presenceCheck' })).status).toBe('cancelled');
  });

  it('declares members, and only members, a read (frozen state, no write-through; decision 1120)', async () => {
    const behaviour = callActor(callDeps([]));
    expect(behaviour.readOnly?.({ type: 'members' })).toBe(true);
    for (const msg of [
      { type: 'accept', caller: who(B) },
      { type: 'end', caller: who(A) },
      { type: 'ringTimeout' },
      { type: 'presenceCheck' },
    ] as const)
      expect(behaviour.readOnly?.(msg)).toBe(false);
    // The read runs on the frozen state of a live call (an in-place change there would throw).
    const h = turnHarness(behaviour, { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: [B], callType: 'video' } });
    const before = h.state;
    expect(await h.send({ type: 'members' })).toEqual({ status: 'ringing', memberIds: [A, B] });
    expect(h.state).toBe(before);
  });
});
