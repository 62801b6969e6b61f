import { describe, it, expect } from '@jest/globals';
import { callActor, type CallActorDeps } from '../../../src/actors/call.actor.js';
import { meetingActor, type MeetingActorDeps } from '../../../src/actors/meeting.actor.js';
import { deviceActor, type DeviceAuditEntry } from '../../../src/actors/device.actor.js';
import type { CallState } from '../../../src/actors/call.schema.js';
import type { Caller } from '../../../src/actors/common.schema.js';
import { turnHarness } from './turn-harness.js';

const T = 'acme';
const who = (userId: string, role = 'clinician'): Caller => ({ userId, username: userId, role, permissions: [] });
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const C = 'c'.repeat(24);

function callDeps(records: CallState[]): CallActorDeps {
  return {
    ringTimeoutMs: 1000,
    activeUserIds: async (_t, ids) => new Set(ids.filter((id) => [A, B, C].includes(id))),
    saveRecord: async (_t, call) => { records.push(structuredClone(call)); return true; },
  };
}

describe('call actor turns', () => {
  const callId = '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d';

  it('rings the callee, connects on accept and ends for every party', async () => {
    const records: CallState[] = [];
    const h = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    const info = await h.send({ type: 'init', caller: who(A), callerName: 'Alice', req: { calleeIds: [B], callType: 'video' } });
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

  it('turns an unanswered call into a missed call when the ring timer fires', async () => {
    const records: CallState[] = [];
    const h = turnHarness(callActor(callDeps(records)), { tenant: T, kind: 'call', id: callId });
    await h.send({ type: 'init', caller: who(A), callerName: 'Alice', req: { calleeIds: [B], callType: 'audio' } });
    expect((await h.fire('ring')).status).toBe('missed');
    expect(h.emitted.at(-1)).toMatchObject({ event: 'onEndCall', payload: { status: 'missed' } });
  });

  it('refuses strangers, unknown callees and late transitions with coded errors', async () => {
    const h = turnHarness(callActor(callDeps([])), { tenant: T, kind: 'call', id: callId });
    await expect(h.send({ type: 'init', caller: who(A), callerName: 'A', req: { calleeIds: ['d'.repeat(24)], callType: 'video' } })).rejects.toMatchObject({ code: 'user_not_found' });
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
});

function meetingDeps(participants: string[], recordingCalls: string[]): MeetingActorDeps {
  const room = { provider: 'embedded', roomName: 'r1', url: 'embedded://r1' };
  const check = async (_t: string, c: Caller, eventId: string) => {
    if (!participants.includes(c.userId)) throw Object.assign(new Error('x'), { code: 'forbidden' });
    return { eventId, room, token: `tok-${c.userId}` };
  };
  return {
    initEvent: check,
    joinEvent: check,
    isParticipant: async (_t, _e, u) => participants.includes(u),
    startRecording: async () => void recordingCalls.push('start'),
    stopRecording: async () => void recordingCalls.push('stop'),
  };
}

describe('meeting actor turns', () => {
  it('numbers meetingEvents in turn order and gates actions on membership', async () => {
    const rec: string[] = [];
    const h = turnHarness(meetingActor(meetingDeps([A, B], rec)), { tenant: T, kind: 'meeting', id: 'ev1' });
    const data = await h.send({ type: 'init', caller: who(A) });
    expect(data).toMatchObject({ eventId: 'ev1', token: `tok-${A}`, meeting: { started: true } });
    await h.send({ type: 'join', caller: who(B) });
    await expect(h.send({ type: 'notify', caller: who(C), action: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    await h.send({ type: 'notify', caller: who(B), action: 'raiseHand', data: { up: true } });
    await h.send({ type: 'startRecording', caller: who(A) });
    await h.send({ type: 'startRecording', caller: who(A) });
    await h.send({ type: 'stopRecording', caller: who(A) });
    const events = h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => [e.payload.seq, e.payload.type]);
    expect(events).toEqual([[1, 'meetingStarted'], [2, 'participantJoined'], [3, 'participantJoined'], [4, 'notify'], [5, 'recordingStarted'], [6, 'recordingStopped']]);
    expect(rec).toEqual(['start', 'stop']);
    expect(await h.send({ type: 'isMember', userId: C })).toEqual({ member: false });
    await expect(h.send({ type: 'details', caller: who(C) })).rejects.toMatchObject({ code: 'meeting_not_found' });
  });

  it('shares and clears images to the headsets of the meeting', async () => {
    const h = turnHarness(meetingActor(meetingDeps([A], [])), { tenant: T, kind: 'meeting', id: 'ev2' });
    await h.send({ type: 'init', caller: who(A) });
    await h.send({ type: 'shareImage', caller: who(A), req: { eventId: 'ev2', image: { url: 'https://x.test/a.png' } } });
    await h.send({ type: 'clearImage', caller: who(A) });
    expect(h.emitted.filter((e) => e.rooms[0] === `meeting-devices:${T}:ev2`).map((e) => e.event)).toEqual(['onShareImage', 'onClearImage']);
  });
});

describe('device actor turns', () => {
  const deps = (audit: DeviceAuditEntry[]) => ({ heartbeatIntervalMs: 100, offlineAfterMs: 300, audit: async (_t: string, e: DeviceAuditEntry) => void audit.push(e) });

  it('registers, heartbeats, goes offline on a missed heartbeat and reports changes', async () => {
    const h = turnHarness(deviceActor(deps([])), { tenant: T, kind: 'device', id: 'hs-1' });
    const info = await h.send({ type: 'rapidConnect', caller: who('dev', 'device'), joinCode: 'ABCD-1234' });
    expect(info).toMatchObject({ deviceId: 'hs-1', joinCode: 'ABCD-1234', userId: 'dev' });
    await h.send({ type: 'heartbeat', caller: who('dev', 'device'), meetingId: null, info: { deviceId: 'hs-1', batteryLevel: 80 } });
    await h.send({ type: 'heartbeat', caller: who('dev', 'device'), meetingId: null, info: { deviceId: 'hs-1', batteryLevel: 80 } });
    await h.send({ type: 'heartbeat', caller: who('dev', 'device'), meetingId: null, info: { deviceId: 'hs-1', batteryLevel: 70 } });
    expect(h.emitted.filter((e) => e.event === 'deviceInfo')).toHaveLength(3);
    expect(h.emitted.filter((e) => e.event === 'deviceUpdated')).toHaveLength(3);
    expect((await h.fire('offline')).status).toBe('offline');
    expect(h.emitted.at(-1)).toMatchObject({ event: 'deviceUpdated', payload: { status: 'offline' } });
    await expect(h.send({ type: 'heartbeat', caller: who('other', 'device'), info: { deviceId: 'hs-1' } })).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('delivers and audits remote control only inside the device meeting after requestRemote', async () => {
    const audit: DeviceAuditEntry[] = [];
    const h = turnHarness(deviceActor(deps(audit)), { tenant: T, kind: 'device', id: 'hs-2' });
    await h.send({ type: 'rapidConnect', caller: who('dev', 'device'), joinCode: 'WXYZ' });
    await h.send({ type: 'assignMeeting', caller: who(A), eventId: 'ev1' });
    await expect(h.send({ type: 'requestRemote', caller: who(A), member: true, meetingId: 'ev9' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(h.send({ type: 'remoteControl', caller: who(A), member: true, meetingId: 'ev1', req: { deviceId: 'hs-2', command: 'zoom' } })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(h.send({ type: 'requestRemote', caller: who(C), member: false, meetingId: 'ev1' })).rejects.toMatchObject({ code: 'forbidden' });
    await h.send({ type: 'requestRemote', caller: who(A), member: true, meetingId: 'ev1' });
    const ack = await h.send({ type: 'remoteControl', caller: who(A), member: true, meetingId: 'ev1', req: { deviceId: 'hs-2', command: 'zoom', params: { level: 2 } } });
    expect(ack.commandId).toBe('hs-2:2');
    expect(h.emitted.filter((e) => e.event === 'onRemoteControl').map((e) => e.payload.command)).toEqual(['remoteRequested', 'zoom']);
    expect(audit.map((a) => a.outcome)).toEqual(['failure', 'success']);
    await h.send({ type: 'startPeripheral', caller: who(A), member: true, req: { eventId: 'ev1', deviceId: 'hs-2', peripheralId: 'steth' } });
    await h.send({ type: 'stopPeripheral', caller: who(A), member: true, req: { eventId: 'ev1', deviceId: 'hs-2', peripheralId: 'steth' } });
    expect(h.emitted.filter((e) => e.event.startsWith('peripheral')).map((e) => e.event)).toEqual(['peripheralStarted', 'peripheralStopped']);
  });
});
