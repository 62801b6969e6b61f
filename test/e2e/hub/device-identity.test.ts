import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestNode } from '../../support/node.js';
import { startHubCluster } from '../../support/cluster.js';
import { client } from '../../support/http.js';
import { call, must, recorder } from '../../support/hub-client.js';
import { registerHardware } from '../../support/auth.js';

/**
 * One device identity (docs/decisions/312): a headset mapped with getDevice is one device whichever id
 * a caller names it by (the device id REST hands out, or any of its hardware ids), on REST and on the
 * hub, and its record shows what its actor knows. The headset and the clinicians sit on different nodes.
 */
describe('one device identity across REST and the hub', () => {
  let cluster: Awaited<ReturnType<typeof startHubCluster>>;
  let n: TestNode[];
  let ids: Record<string, string>;
  let tokens: Record<string, string>;
  let http: ReturnType<typeof client>;
  const on = (i: number, user: string) => cluster.on(i, user);

  beforeAll(async () => {
    cluster = await startHubCluster(2, [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['headset', 'device'],
    ]);
    ({ nodes: n, ids, tokens } = cluster);
    http = client(n[0]!.url!);
  });
  afterAll(async () => {
    await cluster.destroy();
  });

  /** Maps hardware ids to a device of a peripheral type over REST, as the headset's installer does. */
  async function mapDevice(typeKey: string, physicalIds: string[]): Promise<string> {
    const types = await http.get('/api/peripheral/types', { tenant: 'acme', token: tokens.alice });
    const type = (types.body as { id: string; key: string }[]).find((t) => t.key === typeKey)!;
    const mapped = await http.post(`/api/peripheral/getDevice/${type.id}`, {
      tenant: 'acme',
      token: tokens.alice,
      body: { physicalIds, name: `Ward headset ${physicalIds[0]}` },
    });
    expect(mapped.status).toBe(200);
    return mapped.body.device.id as string;
  }

  async function meeting() {
    const host = await n[0]!.services.auth.verifyAccessToken('acme', tokens.alice!);
    const now = Date.now();
    const event = await n[0]!.services.events.create(host, {
      name: 'Consultation',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [{ userId: ids.bob!, role: 'participant' as const }],
      attachments: [],
    });
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const bob = await on(0, 'bob');
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    return { event, eventId, alice, bob };
  }

  it('a headset connecting by hardware id is the device REST mapped: peripherals by either id reach it', async () => {
    const deviceId = await mapDevice('headset', ['HW-ID-7', 'MAC-00:11:22']);
    const { event, eventId, alice, bob } = await meeting();
    const headset = await on(1, 'headset');
    const rh = recorder(headset);
    await registerHardware(n[0]!, 'acme', 'HW-ID-7', ids.headset!);
    const joined = await must(headset, 'initRapidConnect', 'HW-ID-7', event.meetingCode);
    expect(joined).toMatchObject({ deviceId, uniqueId: 'HW-ID-7', meetingId: eventId });

    await must(alice, 'startPeripheral', { eventId, deviceId, peripheralId: 'otoscope-1', peripheralType: 'otoscope' });
    expect(await rh.next('peripheralStarted')).toMatchObject({ deviceId, peripheralId: 'otoscope-1' });
    // The other hardware id names the same device: bob stops what alice started through the device id.
    const stopped = await must(bob, 'stopPeripheral', {
      eventId,
      deviceId: 'MAC-00:11:22',
      peripheralId: 'otoscope-1',
    });
    expect(stopped).toMatchObject({ deviceId, peripherals: {} });
    expect(await rh.next('peripheralStopped')).toMatchObject({ deviceId, stoppedBy: ids.bob });

    // Remote control requested by hardware id, commanded by device id: one controller, one device.
    await must(alice, 'requestRemote', eventId, 'HW-ID-7');
    const cmd = await must(alice, 'remoteControl', eventId, { deviceId, command: 'zoom', params: { level: 2 } });
    expect(await rh.next('onRemoteControl', (p) => p.command === 'zoom')).toMatchObject({
      deviceId,
      commandId: cmd.commandId,
    });

    // The headset reports under either id; another device's id is refused.
    await must(headset, 'deviceStatus', eventId, { deviceId: 'HW-ID-7', batteryLevel: 61 });
    await must(headset, 'deviceStatus', eventId, { deviceId, batteryLevel: 60 });
    const other = await mapDevice('headset', ['HW-ID-8']);
    expect(await call(headset, 'deviceStatus', eventId, { deviceId: other, batteryLevel: 1 })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });

    // The device's record shows what its actor knows.
    const listed = await http.get('/api/peripheral/devices', { tenant: 'acme', token: tokens.alice });
    expect(listed.status).toBe(200);
    const mine = (listed.body as { id: string; status: string; info: Record<string, unknown> }[]).find(
      (d) => d.id === deviceId,
    );
    expect(mine).toMatchObject({ status: 'online', info: { batteryLevel: 60 } });
  });

  it('REST rapid connect takes a hardware id and answers with the device it names', async () => {
    const deviceId = await mapDevice('headset', ['HW-RC-3']);
    const r = await http.post('/api/meetings/startRapidConnect/HW-RC-3', { tenant: 'acme', token: tokens.alice });
    expect(r.status).toBe(200);
    expect(r.body.device).toMatchObject({ id: deviceId });
    const unknown = await http.post('/api/meetings/startRapidConnect/HW-NEVER-MAPPED', {
      tenant: 'acme',
      token: tokens.alice,
    });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'device_not_found' });
  });

  it('hardware mapped for a second peripheral type keeps naming the first device', async () => {
    const first = await mapDevice('headset', ['HW-TWO-TYPES']);
    const second = await mapDevice('camera', ['HW-TWO-TYPES']);
    expect(second).not.toBe(first);
    const { event } = await meeting();
    const headset = await on(1, 'headset');
    await registerHardware(n[0]!, 'acme', 'HW-TWO-TYPES', ids.headset!);
    expect(await must(headset, 'initRapidConnect', 'HW-TWO-TYPES', event.meetingCode)).toMatchObject({
      deviceId: first,
    });
  });
});
