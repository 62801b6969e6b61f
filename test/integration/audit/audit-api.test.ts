import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { fhirValidators } from '../../support/fhir-schema.js';
import { verifyExport } from '../../../src/data/audit-export-verifier.js';

const T = 'auditapi';

describe('audit trail over REST and GraphQL, and as FHIR R4 AuditEvents', () => {
  let node: TestNode;
  let admin: string;
  let clinician: string;
  const ids: Record<string, string> = {};
  const eventId = String(new Types.ObjectId());
  const fhir = fhirValidators();

  beforeAll(async () => {
    node = await startTestNode();
    ids.ada = await createUser(node, T, { username: 'ada', role: 'admin' });
    ids.cora = await createUser(node, T, { username: 'cora', role: 'clinician' });
    ids.pat = await createUser(node, T, { username: 'pat', role: 'patient' });
    ids.hs = await createUser(node, T, { username: 'hs-1', role: 'device', kind: 'device' });
    admin = await tokenFor(node, T, 'ada');
    clinician = await tokenFor(node, T, 'cora');
    const audit = node.services.auth.audit;
    await audit.record(T, {
      action: 'meeting.join',
      outcome: 'success',
      actorId: ids.pat,
      subjectId: ids.pat,
      eventId,
    });
    await audit.record(T, {
      action: 'recording.start',
      outcome: 'success',
      actorId: ids.cora,
      eventId,
      ip: '10.0.0.7',
    });
    await audit.record(T, {
      action: 'device.remoteControl',
      outcome: 'failure',
      actorId: ids.cora,
      subjectId: ids.hs,
      eventId,
      details: { command: 'zoomIn' },
    });
  });
  afterAll(async () => node.destroy());

  it('pages and filters the trail for admins; others are refused by the permission table', async () => {
    const get = (query: Record<string, string>, token = admin) =>
      node.http.get(`/api/admin/audit?${new URLSearchParams(query)}`, { tenant: T, token });
    const byEvent = await get({ eventId });
    expect(byEvent.status).toBe(200);
    expect(byEvent.body.items.map((e: { action: string }) => e.action)).toEqual([
      'device.remoteControl',
      'recording.start',
      'meeting.join',
    ]);
    expect((await get({ actorId: ids.cora })).body.items).toHaveLength(2);
    expect((await get({ subjectId: ids.hs, action: 'device.remoteControl' })).body.items).toHaveLength(1);
    expect((await get({ eventId, to: '2000-01-01T00:00:00Z' })).body.items).toHaveLength(0);
    expect((await get({ eventId, from: new Date(Date.now() - 3_600_000).toISOString() })).body.items).toHaveLength(3);

    const first = await get({ eventId, take: '2' });
    expect(first.body.items).toHaveLength(2);
    const second = await get({ eventId, take: '2', before: String(first.body.next) });
    expect(second.body.items.map((e: { action: string }) => e.action)).toEqual(['meeting.join']);
    expect(second.body.next).toBeUndefined();

    expect(await get({ eventId: 'nope' })).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect(await get({ eventId }, clinician)).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await node.http.get('/api/admin/audit', { tenant: T })).status).toBe(401);

    const verify = await node.http.get('/api/admin/audit/verify', { tenant: T, token: admin });
    expect(verify.body).toMatchObject({ tenant: T, ok: true });
    const signed = await node.http.post('/api/admin/audit/checkpoint', { tenant: T, token: admin });
    expect(signed.body.checkpoint).toMatchObject({ seq: verify.body.head.seq, hash: verify.body.head.hash });
    const exported = await node.http.get('/api/admin/audit/export', { tenant: T, token: admin });
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const keys = (await node.services.auth.signingKeys.jwks()).keys;
    expect(await verifyExport(exported.text.split('\n'), keys)).toMatchObject({ ok: true, tenant: T });
  });

  it('answers the same over GraphQL, under the same permission', async () => {
    const query = `query($f: AuditFilter) { auditTrail(filter: $f) { items { seq action actorId eventId details } next }
      auditVerify { ok verified headSeq } }`;
    const ask = (token: string) =>
      node.http.post('/graphql', { tenant: T, token, body: { query, variables: { f: { eventId, take: 2 } } } });
    const r = await ask(admin);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.auditTrail.items.map((e: { action: string }) => e.action)).toEqual([
      'device.remoteControl',
      'recording.start',
    ]);
    expect(JSON.parse(r.body.data.auditTrail.items[0].details)).toEqual({ command: 'zoomIn' });
    expect(r.body.data.auditVerify).toMatchObject({ ok: true });
    const refused = await ask(clinician);
    expect(refused.body.errors[0].extensions.code).toBe('permission_denied');
  });

  it('exports FHIR R4 AuditEvents (Bundle and bulk ndjson) that the published FHIR R4 schema accepts', async () => {
    const r = await node.http.get(`/api/admin/audit/fhir?eventId=${eventId}`, { tenant: T, token: admin });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/fhir\+json/);
    expect(fhir.bundle(r.body) ? [] : fhir.bundle.errors).toEqual([]);
    const events = r.body.entry.map((e: { resource: Record<string, any> }) => e.resource);
    for (const ev of events) expect(fhir.auditEvent(ev) ? [] : fhir.auditEvent.errors).toEqual([]);
    const control = events.find((e: any) => e.subtype[0].code === 'device.remoteControl');
    expect(control.agent[0].who.reference).toBe(`Practitioner/${ids.cora}`);
    expect(control.outcome).toBe('4');
    const refs = control.entity.map((e: any) => e.what.reference).filter(Boolean);
    expect(refs).toEqual([`Encounter/${eventId}`, `Device/${ids.hs}`]);
    const join = events.find((e: any) => e.subtype[0].code === 'meeting.join');
    expect(join.agent[0].who.reference).toBe(`Patient/${ids.pat}`);
    const recording = events.find((e: any) => e.subtype[0].code === 'recording.start');
    expect(recording.agent[0].network).toEqual({ address: '10.0.0.7', type: '2' });

    const bulk = await node.http.get('/api/admin/audit/fhir/bulk', { tenant: T, token: admin });
    expect(bulk.headers['content-type']).toMatch(/^application\/fhir\+ndjson/);
    const lines = bulk.text
      .trim()
      .split('\n')
      .map((l: string) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const ev of lines) expect(fhir.auditEvent(ev) ? [] : fhir.auditEvent.errors).toEqual([]);

    // The validator is not vacuous: a resource without its agent or with a wrong outcome code fails.
    expect(fhir.auditEvent({ ...control, agent: undefined })).toBe(false);
    expect(fhir.auditEvent({ ...control, outcome: 'ok' })).toBe(false);
  });

  it('records scheduling actions: a consultation created, changed and cancelled', async () => {
    const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const created = await node.http.post('/api/events/create', {
      tenant: T,
      token: clinician,
      body: { name: 'Consult', startAt: at(1), endAt: at(2), participants: [{ userId: ids.pat }] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(
      (
        await node.http.post('/api/events/update', {
          tenant: T,
          token: clinician,
          body: { eventId: id, name: 'Follow-up' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await node.http.post('/api/events/cancel', { tenant: T, token: clinician, body: { eventIds: [id] } })).status,
    ).toBe(200);
    const r = await node.http.get(`/api/admin/audit?eventId=${id}`, { tenant: T, token: admin });
    expect(r.body.items.map((e: { action: string; actorId: string }) => [e.action, e.actorId])).toEqual([
      ['event.cancel', ids.cora],
      ['event.update', ids.cora],
      ['event.create', ids.cora],
    ]);
    expect(r.body.items[1].details).toEqual({ changed: ['name'] });
  });
});
