import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, registerHardware, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { connect, must, call, type HubClient } from '../../support/hub-client.js';
import { inHours } from '../../support/events.js';
import { multipart, xlsx } from '../../support/form.js';
import { TelemetryClient, conferenceScript } from '../../../src/vcs/telemetry.client.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';
import { fhirValidators } from '../../support/fhir-schema.js';

const T = 'auditsec';

type Entry = {
  seq: number;
  action: string;
  outcome: string;
  actorId?: string;
  subjectId?: string;
  eventId?: string;
  details?: Record<string, unknown>;
};

/**
 * Requests made while impersonating, role changes, admin presence look-ups, peripheral control,
 * telemetry completion, pending-user imports and tenant provisioning, each done through its real
 * transport (REST, the hub, gRPC, the job queue) and read back from the admin audit API; the chain
 * still verifies afterwards.
 */
describe('audit trail of security and administrative actions', () => {
  let node: TestNode;
  let admin: string;
  const ids: Record<string, string> = {};
  const open: HubClient[] = [];

  const trail = async (filter: Record<string, string>, tenant = T, token = admin): Promise<Entry[]> => {
    const r = await node.http.get(`/api/admin/audit?${new URLSearchParams(filter)}`, { tenant, token });
    expect(r.status).toBe(200);
    return r.body.items as Entry[];
  };
  const verified = async (tenant = T, token = admin) =>
    expect((await node.http.get('/api/admin/audit/verify', { tenant, token })).body).toMatchObject({ ok: true });

  beforeAll(async () => {
    node = await startTestNode({
      ROLES: 'http,hub,actors,workers,telemetry',
      JOBS_BACKOFF_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
    });
    for (const [u, role, kind] of [
      ['ada', 'admin'],
      ['cora', 'clinician'],
      ['pat', 'patient'],
      ['sam', 'support'],
      ['hs', 'device', 'device'],
    ] as const)
      ids[u] = await createUser(node, T, { username: u, role, ...(kind ? { kind } : {}) });
    admin = await tokenFor(node, T, 'ada');
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('records every request made while impersonating, over REST and the hub, with both identities', async () => {
    const sam = await tokenFor(node, T, 'sam');
    const imp = await node.http.post('/api/account/impersonate', { tenant: T, token: sam, body: { username: 'cora' } });
    expect(imp.status).toBe(200);
    const token = imp.body.accessToken as string;
    expect((await node.http.get('/api/events/get?take=5', { tenant: T, token })).status).toBe(200);
    const both = { actorId: ids.sam, subjectId: ids.cora };
    expect(await trail({ action: 'impersonation.request', actorId: ids.sam })).toEqual([
      expect.objectContaining({
        ...both,
        details: { via: 'rest', method: 'GET', path: '/api/events/get', onBehalfOf: ids.cora },
      }),
    ]);

    const hub = await connect(node.url!, T, { token });
    open.push(hub);
    // Recorded whether the method is allowed or not: the request was made.
    await call(hub, 'getMeetingDetails', { eventId: '0'.repeat(24) });
    const hubEntries = (await trail({ action: 'impersonation.request', actorId: ids.sam })).filter(
      (e) => e.details?.via === 'hub',
    );
    expect(hubEntries).toEqual([
      expect.objectContaining({
        ...both,
        details: { via: 'hub', method: 'getMeetingDetails', onBehalfOf: ids.cora },
      }),
    ]);
    // A plain request (nobody impersonating) adds none.
    await node.http.get('/api/events/get?take=5', { tenant: T, token: await tokenFor(node, T, 'cora') });
    expect(await trail({ action: 'impersonation.request' })).toHaveLength(2);
    await verified();
  });

  it("records role changes and admin look-ups of other users' presence", async () => {
    const r = await node.http.post('/api/account/assignRole', {
      tenant: T,
      token: admin,
      body: { userId: ids.pat, role: 'clinician' },
    });
    expect(r.status).toBe(200);
    expect(await trail({ action: 'role.assign' })).toEqual([
      expect.objectContaining({ actorId: ids.ada, subjectId: ids.pat, details: { role: 'clinician' } }),
    ]);
    await node.http.post('/api/account/assignRole', {
      tenant: T,
      token: admin,
      body: { userId: ids.pat, role: 'patient' },
    });

    const sam = await tokenFor(node, T, 'sam');
    for (const path of [
      `/api/admin/lastSeen/${ids.cora}`,
      `/api/admin/lastSeen/${T}/cora`,
      `/api/admin/isOnline/${T}/cora`,
      `/api/admin/user/${T}/cora`,
    ])
      expect((await node.http.get(path, { tenant: T, token: sam })).status).toBe(200);
    const reads = await trail({ action: 'presence.read', actorId: ids.sam });
    expect(reads.map((e) => [e.subjectId, e.details?.helper])).toEqual([
      [ids.cora, 'user'],
      [ids.cora, 'isOnline'],
      [ids.cora, 'lastSeen'],
      [ids.cora, 'lastSeen'],
    ]);
    await verified();
  });

  it("records a headset's remote control taken and used, and its peripheral started and stopped, in the consultation", async () => {
    const created = await node.http.post('/api/events/create', {
      tenant: T,
      token: await tokenFor(node, T, 'cora'),
      body: { name: 'Exam', startAt: inHours(0), endAt: inHours(1), participants: [] },
    });
    const eventId = created.body.id as string;
    const cora = await connect(node.url!, T, { token: await tokenFor(node, T, 'cora') });
    const headset = await connect(node.url!, T, { token: await tokenFor(node, T, 'hs') });
    open.push(cora, headset);
    await must(cora, 'initEvent', { eventId });
    await registerHardware(node, T, 'HS-AUDIT-1', ids.hs!);
    await must(headset, 'initRapidConnect', 'HS-AUDIT-1', created.body.meetingCode);
    await must(cora, 'requestRemote', eventId, 'HS-AUDIT-1');
    const { commandId } = await must(cora, 'remoteControl', eventId, { deviceId: 'HS-AUDIT-1', command: 'zoomIn' });
    const req = { eventId, deviceId: 'HS-AUDIT-1', peripheralId: 'otoscope-1' };
    await must(cora, 'startPeripheral', { ...req, peripheralType: 'otoscope' });
    await must(cora, 'stopPeripheral', req);
    const entries = await trail({ eventId, actorId: ids.cora });
    expect(entries.filter((e) => e.action.startsWith('peripheral.'))).toEqual([
      expect.objectContaining({
        action: 'peripheral.stop',
        eventId,
        details: { peripheralId: 'otoscope-1', deviceId: 'HS-AUDIT-1' },
      }),
      expect.objectContaining({
        action: 'peripheral.start',
        eventId,
        details: { peripheralId: 'otoscope-1', peripheralType: 'otoscope', deviceId: 'HS-AUDIT-1' },
      }),
    ]);
    expect(entries.filter((e) => e.action.startsWith('device.'))).toEqual([
      expect.objectContaining({
        action: 'device.remoteControl',
        eventId,
        details: expect.objectContaining({ deviceId: 'HS-AUDIT-1', command: 'zoomIn', commandId }),
      }),
      expect.objectContaining({ action: 'device.requestRemote', eventId, details: { deviceId: 'HS-AUDIT-1' } }),
    ]);
    await verified();
  });

  it('records the completion of a consultation from its gRPC telemetry, and each read of its ledger', async () => {
    const created = await node.http.post('/api/events/create', {
      tenant: T,
      token: await tokenFor(node, T, 'cora'),
      body: { name: 'Video', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: ids.pat }] },
    });
    const eventId = created.body.id as string;
    const conferenceId = `conf-${eventId}`;
    const address = `127.0.0.1:${(node.roles.get('telemetry') as TelemetryRoleHandle).port}`;
    const client = new TelemetryClient(address, T, await node.services.telemetry.issueKey(T));
    await client.stream(
      conferenceScript({
        conferenceId,
        eventId,
        chatMessages: 2,
        recording: false,
        participants: [{ key: ids.pat, userId: ids.pat, name: 'Pat' }],
      }),
    );
    const done = await node.services.jobs.waitUntilFinished(
      'telemetry-completion',
      `completion.${T}.${eventId}.${conferenceId}`,
    );
    expect(done.state).toBe('completed');
    expect(await trail({ action: 'telemetry.complete', eventId })).toEqual([
      expect.objectContaining({
        eventId,
        details: {
          conferenceId,
          ledgerEntries: 1,
          hasLedger: true,
          hasRecording: false,
          hasChat: true,
          // Who the completion turn took out of the meeting (nobody joined this one through the hub).
          members: [],
          waiting: [],
        },
      }),
    ]);
    const cora = await tokenFor(node, T, 'cora');
    expect((await node.http.get(`/api/events/${eventId}/ledger`, { tenant: T, token: cora })).status).toBe(200);
    expect(await trail({ action: 'ledger.read', eventId })).toEqual([
      expect.objectContaining({ actorId: ids.cora, eventId, details: expect.objectContaining({ rows: 1, total: 1 }) }),
    ]);
    await verified();
  });

  it('records a pending-user import started, finished and activated', async () => {
    const sheet = await xlsx([
      ['Username', 'E-mail', 'Display name', 'Role'],
      ['aud.one', 'one@clinic.org', 'Aud One', 'clinician'],
      ['aud.two', '', 'Aud Two', 'patient'],
    ]);
    const { body, headers } = multipart([{ name: 'file', file: { fileName: 'staff.xlsx', content: sheet } }]);
    const up = await node.http.post('/api/uploads/pendingUsers', { tenant: T, token: admin, rawBody: body, headers });
    expect(up.status).toBe(202);
    const importId = up.body.importId as string;
    expect(await trail({ action: 'import.start' })).toEqual([
      expect.objectContaining({
        actorId: ids.ada,
        details: expect.objectContaining({ importId, kind: 'pendingUsers', fileName: 'staff.xlsx' }),
      }),
    ]);
    const job = await node.infra.queues.waitUntilFinished('pending-user-import', `import.${T}.${importId}`);
    expect(job.state).toBe('completed');
    expect(await trail({ action: 'import.complete' })).toEqual([
      expect.objectContaining({
        outcome: 'success',
        subjectId: ids.ada,
        details: { importId, kind: 'pendingUsers', rowsTotal: 2, rowsImported: 2, rowErrors: 0 },
      }),
    ]);
    const act = await node.http.post('/api/admin/pendingUsers/activate', {
      tenant: T,
      token: admin,
      body: { importId },
    });
    expect(act.status).toBe(200);
    expect(await trail({ action: 'import.activate' })).toEqual([
      expect.objectContaining({
        actorId: ids.ada,
        details: { importId, requested: 2, outcomes: { activated: 2 } },
      }),
    ]);
    await verified();
  });

  it("records a tenant's creation and each migration that changed it, in the tenant's own trail", async () => {
    const fresh = `${T}-new`;
    const r = await node.http.post(`/api/admin/migrate/${fresh}?code=${node.config.auth.provisioningCode}`, {
      tenant: T,
    });
    expect(r.status).toBe(200);
    await createUser(node, fresh, { username: 'root', role: 'admin' });
    const token = await tokenFor(node, fresh, 'root');
    const tenantEntries = async () => (await trail({}, fresh, token)).filter((e) => e.action.startsWith('tenant.'));
    const entries = await tenantEntries();
    expect(entries.map((e) => [e.seq, e.action, e.details?.via])).toEqual([
      [2, 'tenant.migrate', 'provisioning'],
      [1, 'tenant.create', 'provisioning'],
    ]);
    expect(entries[0]!.details).toMatchObject({ from: 0, to: expect.any(Number), applied: expect.any(Array) });
    // Provisioning again changes nothing and records nothing.
    await node.http.post(`/api/admin/migrate/${fresh}?code=${node.config.auth.provisioningCode}`, { tenant: T });
    expect(await tenantEntries()).toHaveLength(2);
    await verified(fresh, token);
  });

  it('records every change of an outbound-events subscription, naming the endpoint by host only', async () => {
    const api = (path: string, body: Record<string, unknown> = {}) =>
      node.http.post(`/api/webhooks/subscriptions${path}`, { tenant: T, token: admin, body });
    // The path and query of an endpoint may carry a token: neither is written.
    const created = await api('', {
      url: 'http://127.0.0.1:9/hooks/abc?token=s3cret-hook',
      types: ['recording.available'],
    });
    expect(created.status).toBe(201);
    const id = created.body.subscription.id as string;
    for (const step of ['/pause', '/resume', '/rotateSecret', '/replay', '/delete'])
      expect(
        (
          await api(
            `/${id}${step}`,
            step === '/rotateSecret' ? { graceHours: 1 } : step === '/replay' ? { after: '0' } : {},
          )
        ).status,
      ).toBeLessThan(300);
    const entries = (await trail({ actorId: ids.ada })).filter((e) => e.action.startsWith('webhook.'));
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['webhook.delete', { subscriptionId: id, host: '127.0.0.1:9' }],
      ['webhook.replay', { subscriptionId: id, after: '0' }],
      ['webhook.rotate_secret', { subscriptionId: id, graceHours: 1 }],
      ['webhook.resume', { subscriptionId: id }],
      ['webhook.pause', { subscriptionId: id }],
      ['webhook.create', { subscriptionId: id, host: '127.0.0.1:9', types: ['recording.available'] }],
    ]);
    const text = JSON.stringify(await trail({}));
    expect(text).not.toContain('s3cret-hook');
    expect(text).not.toContain(created.body.secret);
    await verified();
  });

  it('exports every kind of entry recorded above as a FHIR R4 AuditEvent the published schema accepts', async () => {
    const fhir = fhirValidators();
    const bulk = await node.http.get('/api/admin/audit/fhir/bulk', { tenant: T, token: admin });
    expect(bulk.status).toBe(200);
    const events = bulk.text
      .trim()
      .split('\n')
      .map((l: string) => JSON.parse(l) as Record<string, any>);
    const kinds = new Set(events.map((e) => e.subtype[0].code as string));
    for (const k of [
      'impersonation.request',
      'presence.read',
      'peripheral.start',
      'telemetry.complete',
      'import.complete',
    ])
      expect(kinds).toContain(k);
    for (const ev of events) expect(fhir.auditEvent(ev) ? [] : fhir.auditEvent.errors).toEqual([]);
    const query = events.find((e) => e.subtype[0].code === 'presence.read')!;
    expect(query.type).toMatchObject({ code: '110112', display: 'Query' });
    expect(query.action).toBe('R');
    expect(query.entity.map((e: any) => e.what.reference).filter(Boolean)).toEqual([`Practitioner/${ids.cora}`]);
  });
});
