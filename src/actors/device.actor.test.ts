import { describe, it, expect } from '@jest/globals';
import { deviceActor, type DeviceAuditEntry } from './device.actor.js';
import type { Caller } from '../kernel/caller.js';
import type { DevicePush } from '../contracts/device.schema.js';
import { turnHarness } from '../../test/support/turn-harness.js';

const T = 'acme';
const who = (userId: string, role = 'clinician'): Caller => ({ userId, username: userId, role, permissions: [] });
const A = 'a'.repeat(24);
const C = 'c'.repeat(24);

describe('device actor turns', () => {
  const deps = (audit: DeviceAuditEntry[], kept: DevicePush[] = []) => ({
    heartbeatIntervalMs: 100,
    offlineAfterMs: 300,
    audit: async (_t: string, e: DeviceAuditEntry) => void audit.push(e),
    recordStatus: async (_t: string, d: DevicePush) => void kept.push(d),
  });

  it('registers, heartbeats, goes offline on a missed heartbeat and reports changes', async () => {
    const kept: DevicePush[] = [];
    const h = turnHarness(deviceActor(deps([], kept)), { tenant: T, kind: 'device', id: 'hs-1' });
    const info = await h.send({ type: 'rapidConnect', caller: who('dev', 'device'), joinCode: 'ABCD-1234' });
    expect(info).toMatchObject({ deviceId: 'hs-1', joinCode: 'ABCD-1234', userId: 'dev' });
    await h.send({
      type: 'heartbeat',
      caller: who('dev', 'device'),
      meetingId: null,
      info: { deviceId: 'hs-1', batteryLevel: 80 },
    });
    await h.send({
      type: 'heartbeat',
      caller: who('dev', 'device'),
      meetingId: null,
      info: { deviceId: 'hs-1', batteryLevel: 80 },
    });
    await h.send({
      type: 'heartbeat',
      caller: who('dev', 'device'),
      meetingId: null,
      info: { deviceId: 'hs-1', batteryLevel: 70 },
    });
    expect(h.emitted.filter((e) => e.event === 'deviceInfo')).toHaveLength(3);
    expect(h.emitted.filter((e) => e.event === 'deviceUpdated')).toHaveLength(3);
    expect((await h.fire('offline')).status).toBe('offline');
    expect(h.emitted.at(-1)).toMatchObject({ event: 'deviceUpdated', payload: { status: 'offline' } });
    // The device's record hears each change (not the repeated heartbeat): online, info, info, offline.
    expect(kept.map((d) => [d.status, d.info?.batteryLevel])).toEqual([
      ['online', undefined],
      ['online', 80],
      ['online', 70],
      ['offline', 70],
    ]);
    await expect(
      h.send({ type: 'heartbeat', caller: who('other', 'device'), info: { deviceId: 'hs-1' } }),
    ).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('delivers and audits remote control only inside the device meeting after requestRemote', async () => {
    const audit: DeviceAuditEntry[] = [];
    const h = turnHarness(deviceActor(deps(audit)), { tenant: T, kind: 'device', id: 'hs-2' });
    await h.send({ type: 'rapidConnect', caller: who('dev', 'device'), joinCode: 'WXYZ' });
    await h.send({ type: 'assignMeeting', caller: who(A), eventId: 'ev1' });
    await expect(
      h.send({ type: 'requestRemote', caller: who(A), member: true, meetingId: 'ev9' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      h.send({
        type: 'remoteControl',
        caller: who(A),
        member: true,
        meetingId: 'ev1',
        req: { deviceId: 'hs-2', command: 'zoom' },
      }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      h.send({ type: 'requestRemote', caller: who(C), member: false, meetingId: 'ev1' }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await h.send({ type: 'requestRemote', caller: who(A), member: true, meetingId: 'ev1' });
    const ack = await h.send({
      type: 'remoteControl',
      caller: who(A),
      member: true,
      meetingId: 'ev1',
      req: { deviceId: 'hs-2', command: 'zoom', params: { level: 2 } },
    });
    expect(ack.commandId).toBe('hs-2:2');
    expect(h.emitted.filter((e) => e.event === 'onRemoteControl').map((e) => e.payload.command)).toEqual([
      'remoteRequested',
      'zoom',
    ]);
    expect(audit.map((a) => [a.action, a.outcome, a.eventId])).toEqual([
      ['device.remoteControl', 'failure', 'ev1'],
      ['device.requestRemote', 'success', 'ev1'],
      ['device.remoteControl', 'success', 'ev1'],
    ]);
    await h.send({
      type: 'startPeripheral',
      caller: who(A),
      member: true,
      req: { eventId: 'ev1', deviceId: 'hs-2', peripheralId: 'steth' },
    });
    await h.send({
      type: 'stopPeripheral',
      caller: who(A),
      member: true,
      req: { eventId: 'ev1', deviceId: 'hs-2', peripheralId: 'steth' },
    });
    expect(h.emitted.filter((e) => e.event.startsWith('peripheral')).map((e) => e.event)).toEqual([
      'peripheralStarted',
      'peripheralStopped',
    ]);
    expect(audit.slice(3).map((a) => [a.action, a.actorId, a.eventId, a.details])).toEqual([
      ['peripheral.start', A, 'ev1', { peripheralId: 'steth' }],
      ['peripheral.stop', A, 'ev1', { peripheralId: 'steth' }],
    ]);
  });

  it('declares get, and only get, a read (frozen state, no write-through; decision 1120)', async () => {
    const behaviour = deviceActor(deps([]));
    expect(behaviour.readOnly?.({ type: 'get' })).toBe(true);
    expect(behaviour.readOnly?.({ type: 'offlineTimeout' })).toBe(false);
    expect(behaviour.readOnly?.({ type: 'leaveMeeting', eventId: 'ev1' })).toBe(false);
    const h = turnHarness(behaviour, { tenant: T, kind: 'device', id: 'hs-3' });
    await expect(h.send({ type: 'get' })).rejects.toMatchObject({ code: 'device_not_found' });
  });
});
