import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { call, connect, must, type HubClient } from '../../support/hub-client.js';

/** A recording is attributed to whoever asked for it (or, explicitly and audited, by an admin), and every start/stop is audited. */
describe('recording: attribution and audit', () => {
  let node: TestNode;
  const ids: Record<string, string> = {};
  const open: HubClient[] = [];
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  const audits = async (action: string) =>
    (await node.services.auth.audit.list('acme', { action })).map((a) => ({
      actorId: String(a.actorId),
      subjectId: String(a.subjectId),
      eventId: a.eventId,
      outcome: a.outcome,
      details: a.details,
    }));
  const newEvent = async () => {
    const r = await node.http.post('/api/events/create', {
      tenant: 'acme',
      token: await tokenFor(node, 'acme', 'alice'),
      body: { name: 'Consult', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: ids.bob }] },
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const [u, role] of [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['ada', 'admin'],
    ] as const)
      ids[u] = await createUser(node, 'acme', { username: u, role });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('refuses startrecording?userId= naming another participant, attributes to the caller and audits the start', async () => {
    const eventId = await newEvent();
    const bob = await tokenFor(node, 'acme', 'bob');
    const forged = await node.http.get(`/api/tenant/startrecording?eventId=${eventId}&userId=${ids.alice}`, {
      tenant: 'acme',
      token: bob,
    });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe('permission_denied');
    // A recording is a change of the running meeting: the caller is in it (decision 1010).
    const alice = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    const bobSocket = await connect(node.url!, 'acme', { token: bob });
    open.push(alice, bobSocket);
    await must(alice, 'initEvent', { eventId });
    await must(bobSocket, 'joinEvent', { eventId });
    const own = await node.http.get(`/api/tenant/startrecording?eventId=${eventId}`, { tenant: 'acme', token: bob });
    expect(own.status).toBe(200);
    expect(await audits('recording.start')).toContainEqual(
      expect.objectContaining({
        actorId: ids.bob,
        subjectId: ids.bob,
        eventId,
        outcome: 'success',
        details: expect.objectContaining({ eventId, via: 'rest' }),
      }),
    );
  });

  it('lets an administrator start a recording for a participant explicitly, audited as acting for them', async () => {
    const eventId = await newEvent();
    const alice = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    open.push(alice);
    await must(alice, 'initEvent', { eventId });
    const r = await node.http.get(`/api/tenant/startrecording?eventId=${eventId}&userId=${ids.alice}`, {
      tenant: 'acme',
      token: await tokenFor(node, 'acme', 'ada'),
    });
    expect(r.status).toBe(200);
    expect(await audits('recording.start')).toContainEqual(
      expect.objectContaining({
        actorId: ids.ada,
        subjectId: ids.alice,
        eventId,
        details: expect.objectContaining({ eventId, onBehalfOf: ids.alice }),
      }),
    );
  });

  it('audits hub startRecording and stopRecording', async () => {
    const eventId = await newEvent();
    const alice = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    open.push(alice);
    await must(alice, 'initEvent', { eventId });
    await must(alice, 'startRecording', { eventId });
    expect(await call(alice, 'stopRecording', { eventId })).toMatchObject({ ok: true });
    expect(await audits('recording.start')).toContainEqual(
      expect.objectContaining({
        actorId: ids.alice,
        subjectId: ids.alice,
        details: expect.objectContaining({ eventId, via: 'hub' }),
      }),
    );
    expect(await audits('recording.stop')).toContainEqual(
      expect.objectContaining({
        actorId: ids.alice,
        subjectId: ids.alice,
        details: expect.objectContaining({ eventId, via: 'hub' }),
      }),
    );
  });
});
