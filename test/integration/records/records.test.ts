import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';
import { inHours } from '../../support/events.js';
import { TelemetryClient, conferenceScript } from '../../../src/vcs/telemetry.client.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';

const LEDGER = `query L($e: ID!, $p: PagingInput) { eventLedger(eventId: $e, paging: $p) {
  total skip take items { participantKey userId displayName device deviceId joinedAt leftAt durationSeconds
  recordingConsents { requestId consent late } } } }`;
const FILES = `query F($e: ID!, $p: PagingInput) { eventFiles(eventId: $e, paging: $p) {
  total skip take items { source attached file { id kind fileName url thumbnailUrl } } } }`;
const SESSION = `query S($s: String!) { sessionFiles(sessionId: $s) { total items { id ownerId sessionId url } } }`;

/**
 * What the service records about a consultation is read back (decision 940): the ledger written by
 * telemetry completion (hosts and administrators), and the files of an event and of a call session
 * (the media access rule), over REST and GraphQL, paged, never across tenants.
 */
describe('readable records: ledger, event files, session files', () => {
  let node: TestNode;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};
  let consultId: string;
  let otherConsultId: string;
  let foreignEventId: string;
  const uploaded: Record<string, string> = {};

  const get = (user: string, path: string) => node.http.get(path, { tenant: 'acme', token: tokens[user] });
  const gql = (user: string, query: string, variables: Record<string, unknown>) =>
    node.http.post('/graphql', { tenant: 'acme', token: tokens[user], body: { query, variables } });
  const upload = async (user: string, fields: Record<string, string>, size = 24) => {
    const { body, headers } = multipart([
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: 'file', file: { fileName: `scan-${user}.png`, content: await png(size, size) } },
    ]);
    const r = await node.http.post('/api/media/upload', {
      tenant: 'acme',
      token: tokens[user],
      rawBody: body,
      headers,
    });
    expect(r.status).toBe(201);
    return r.body.data.id as string;
  };
  const createEvent = async (tenant: string, user: string, participants: { userId: string; role?: string }[]) => {
    const r = await node.http.post('/api/events/create', {
      tenant,
      token: tokens[user],
      body: { name: 'Consult', startAt: inHours(1), endAt: inHours(2), participants },
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };

  beforeAll(async () => {
    node = await startTestNode({
      ROLES: 'http,actors,workers,telemetry',
      JOBS_BACKOFF_MS: '50',
      VCS_EMBEDDED_FINALIZE_MS: '0',
    });
    for (const [u, role, tenant] of [
      ['cara', 'clinician', 'acme'],
      ['hank', 'clinician', 'acme'],
      ['pat', 'patient', 'acme'],
      ['pia', 'patient', 'acme'],
      ['ada', 'admin', 'acme'],
      ['hs', 'device', 'acme'],
      ['olga', 'clinician', 'other'],
    ] as const) {
      ids[u] = await createUser(node, tenant, { username: u, role, ...(role === 'device' ? { kind: 'device' } : {}) });
      tokens[u] = await tokenFor(node, tenant, u);
    }
    consultId = await createEvent('acme', 'cara', [{ userId: ids.hank! }, { userId: ids.pat! }]);
    otherConsultId = await createEvent('acme', 'cara', [{ userId: ids.pia! }]);
    foreignEventId = await createEvent('other', 'olga', []);
    // Files: two uploads for the event, a private file of the host attached to it, one elsewhere.
    uploaded.patUpload = await upload('pat', { eventId: consultId });
    uploaded.caraUpload = await upload('cara', { eventId: consultId }, 32);
    uploaded.attached = await upload('cara', {}, 40);
    uploaded.unrelated = await upload('pia', { eventId: otherConsultId }, 44);
    const attach = await node.http.post('/api/events/update', {
      tenant: 'acme',
      token: tokens.cara,
      body: { eventId: consultId, attachments: [uploaded.attached] },
    });
    expect(attach.status).toBe(200);
    // A recording of the consultation, stored by the recording job.
    const jobs = node.services.jobs;
    const start = await node.services.recording.requestStart('acme', consultId, ids.cara!);
    expect((await jobs.waitUntilFinished('recording', start.jobId!)).state).toBe('completed');
    const stop = await node.services.recording.requestStop('acme', consultId, ids.cara!);
    expect((await jobs.waitUntilFinished('recording', stop.jobId!)).state).toBe('completed');
    // A recording consent answer stored with the event, as the meeting actor stores it (decision 910);
    // completion keeps it on the patient's ledger row.
    const consentAt = new Date(Date.now() - 60_000);
    await node.infra.mongo.tenantDb('acme').models.Event.updateOne(
      { _id: consultId },
      {
        $push: {
          recordingConsents: {
            key: `rc-1:${ids.pat}`,
            requestId: 'rc-1',
            userId: ids.pat,
            username: 'pat',
            role: 'participant',
            question: 'Do you agree that this consultation is recorded?',
            policy: 'all',
            requestedBy: ids.cara,
            requestedAt: consentAt,
            consent: true,
            at: consentAt,
          },
        },
      },
    );
    // The conference's telemetry through the real gRPC ingest, then completion.
    const key = await node.services.telemetry.issueKey('acme');
    const address = `127.0.0.1:${(node.roles.get('telemetry') as TelemetryRoleHandle).port}`;
    const client = new TelemetryClient(address, 'acme', key);
    await client.stream(
      conferenceScript({
        conferenceId: `conf-${consultId}`,
        eventId: consultId,
        participants: [
          { key: ids.cara!, userId: ids.cara!, name: 'Dr Cara', device: 'web' },
          { key: ids.pat!, userId: ids.pat!, name: 'Pat', device: 'ios' },
          { key: `device:${ids.hs}`, name: 'Headset', device: 'headset' },
        ],
      }),
    );
    client.close();
    const done = await jobs.waitUntilFinished('telemetry-completion', `completion.acme.${consultId}.conf-${consultId}`);
    expect(done.state).toBe('completed');
  }, 120_000);
  afterAll(async () => node?.destroy());

  it('lets the host and an administrator read the ledger written by completion, over REST and GraphQL', async () => {
    const r = await get('cara', `/api/events/${consultId}/ledger`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 3, skip: 0, take: 20 });
    expect(r.body.items).toEqual([
      expect.objectContaining({ participantKey: ids.cara, userId: ids.cara, displayName: 'Dr Cara', device: 'web' }),
      expect.objectContaining({
        participantKey: ids.pat,
        userId: ids.pat,
        device: 'ios',
        deviceId: null,
        recordingConsents: [{ requestId: 'rc-1', consent: true, at: expect.any(String), late: false }],
      }),
      expect.objectContaining({
        participantKey: `device:${ids.hs}`,
        userId: null,
        deviceId: ids.hs,
        device: 'headset',
      }),
    ]);
    expect(r.body.items[0].recordingConsents).toEqual([]);
    const first = r.body.items[0];
    expect(first.durationSeconds).toBe(25 * 60);
    expect(Date.parse(first.leftAt) - Date.parse(first.joinedAt)).toBe(25 * 60_000);
    expect((await get('ada', `/api/events/${consultId}/ledger`)).body.total).toBe(3);
    const q = await gql('cara', LEDGER, { e: consultId, p: { skip: 1, take: 1 } });
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.eventLedger).toMatchObject({ total: 3, skip: 1, take: 1 });
    expect(q.body.data.eventLedger.items).toEqual([
      expect.objectContaining({
        userId: ids.pat,
        device: 'ios',
        recordingConsents: [{ requestId: 'rc-1', consent: true, late: false }],
      }),
    ]);
  });

  it('refuses the ledger to a participant who is not a host and to a patient of another event, with their codes', async () => {
    for (const user of ['hank', 'pat']) {
      const r = await get(user, `/api/events/${consultId}/ledger`);
      expect({ user, status: r.status, code: r.body.code }).toEqual({ user, status: 403, code: 'not_meeting_host' });
      const q = await gql(user, LEDGER, { e: consultId });
      expect({ user, code: q.body.errors?.[0]?.extensions?.code }).toEqual({ user, code: 'not_meeting_host' });
    }
    const pia = await get('pia', `/api/events/${consultId}/ledger`);
    expect({ status: pia.status, code: pia.body.code }).toEqual({ status: 404, code: 'event_not_found' });
    expect((await gql('pia', LEDGER, { e: consultId })).body.errors[0].extensions.code).toBe('event_not_found');
    const device = await get('hs', `/api/events/${consultId}/ledger`);
    expect({ status: device.status, code: device.body.code }).toEqual({ status: 403, code: 'permission_denied' });
  });

  it("lists the event's uploads, attachment and recording with their URLs, on its files and on its details", async () => {
    const r = await get('pat', `/api/events/${consultId}/files`);
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(4);
    const byId = new Map<string, any>(r.body.items.map((f: any) => [f.id, f]));
    expect(byId.get(uploaded.patUpload!)).toMatchObject({ source: 'upload', attached: false, kind: 'image' });
    expect(byId.get(uploaded.caraUpload!)).toMatchObject({ source: 'upload', ownerId: ids.cara });
    expect(byId.get(uploaded.attached!)).toMatchObject({ source: 'attachment', attached: true, eventId: null });
    expect(byId.has(uploaded.unrelated!)).toBe(false);
    const recording = r.body.items.find((f: any) => f.source === 'recording');
    expect(recording).toMatchObject({ kind: 'recording', contentType: 'audio/wav', thumbnailUrl: null });
    // Each item's URLs are the download routes, and the patient may follow them.
    for (const f of r.body.items) {
      expect(f.url).toBe(`/api/media/download/acme/${f.hash}`);
      expect({ id: f.id, status: (await get('pat', f.url)).status }).toEqual({ id: f.id, status: 200 });
      if (f.kind === 'image') expect(f.thumbnailUrl).toBe(`/api/media/thumbnail/acme/${f.hash}`);
    }
    const details = await get('pat', `/api/events/get/${consultId}`);
    expect(details.status).toBe(200);
    expect(details.body.files.total).toBe(4);
    expect(details.body.files.items.map((f: any) => f.id).sort()).toEqual([...byId.keys()].sort());
    const q = await gql('hank', FILES, { e: consultId });
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.eventFiles.total).toBe(4);
    expect(q.body.data.eventFiles.items.map((i: any) => i.source).sort()).toEqual([
      'attachment',
      'recording',
      'upload',
      'upload',
    ]);
    expect((await get('ada', `/api/events/${consultId}/files`)).body.total).toBe(4);
    // GraphQL describes an event's file in REST's shape: the same fields, the same values.
    const fields = Object.keys(r.body.items[0]).join(' ');
    const flat = await gql(
      'hank',
      `query F($e: ID!) { eventFiles(eventId: $e, paging: { take: 100 }) { items { ${fields} } } }`,
      {
        e: consultId,
      },
    );
    expect(flat.body.errors).toBeUndefined();
    const rest = (await get('hank', `/api/events/${consultId}/files?take=100`)).body.items;
    expect(flat.body.data.eventFiles.items).toEqual(rest);
  });

  it('lets a participant made a host in the meeting read its ledger', async () => {
    expect((await get('hank', `/api/events/${consultId}/ledger`)).body.code).toBe('not_meeting_host');
    // The meeting actor records a grant in the audit trail inside its turn (decision 900), as here.
    await node.services.auth.audit.record('acme', {
      action: 'meeting.add_host',
      outcome: 'success',
      actorId: ids.cara!,
      subjectId: ids.hank!,
      eventId: consultId,
      details: { previousRole: 'participant' },
    });
    const r = await get('hank', `/api/events/${consultId}/ledger`);
    expect({ status: r.status, total: r.body.total }).toEqual({ status: 200, total: 3 });
    expect((await gql('hank', LEDGER, { e: consultId })).body.data.eventLedger.total).toBe(3);
    // A refused request for host access grants nothing; a grant to someone else is not theirs.
    await node.services.auth.audit.record('acme', {
      action: 'meeting.host_access_answer',
      outcome: 'success',
      actorId: ids.cara!,
      subjectId: ids.pat!,
      eventId: consultId,
      details: { answer: 'refused' },
    });
    expect((await get('pat', `/api/events/${consultId}/ledger`)).body.code).toBe('not_meeting_host');
    await node.services.auth.audit.record('acme', {
      action: 'meeting.add_host',
      outcome: 'success',
      actorId: ids.cara!,
      subjectId: ids.hank!,
      eventId: otherConsultId,
      details: {},
    });
    expect((await get('pat', `/api/events/${consultId}/ledger`)).body.code).toBe('not_meeting_host');
  });

  it('keeps the end endMeeting recorded when completion arrives with an earlier conference clock', async () => {
    const eventId = await createEvent('acme', 'cara', [{ userId: ids.pat! }]);
    const repo = new EventRepository(node.infra.mongo.tenantDb('acme'));
    const startedAt = new Date(Date.now() - 10 * 60_000);
    await repo.transition(new Types.ObjectId(eventId), ['scheduled'], 'started', { startedAt });
    const ended = await node.services.meetings.endEvent('acme', eventId);
    expect(ended.status).toBe('ended');
    const endedAt = ended.endedAt!;
    // The conference's clock runs an hour behind: its end is before the start this service recorded.
    const conferenceId = `conf-skew-${eventId}`;
    await node.services.telemetry.ingest('acme', [
      {
        conferenceId,
        sequence: 1,
        eventId,
        type: 'participant_joined',
        occurredAt: new Date(startedAt.getTime() - 3_600_000),
        payload: { participantKey: ids.pat!, userId: ids.pat!, displayName: 'Pat', device: 'web' },
      },
      {
        conferenceId,
        sequence: 2,
        eventId,
        type: 'conference_ended',
        occurredAt: new Date(startedAt.getTime() - 3_000_000),
        payload: { reason: 'closed' },
      },
    ]);
    const done = await node.services.jobs.waitUntilFinished(
      'telemetry-completion',
      `completion.acme.${eventId}.${conferenceId}`,
    );
    expect(done.state).toBe('completed');
    const completed = await repo.findById(new Types.ObjectId(eventId));
    expect(completed).toMatchObject({ status: 'completed', startedAt, endedAt });
    expect(completed!.endedAt!.getTime() - completed!.startedAt!.getTime()).toBeGreaterThan(0);
  });

  it('pages the files and the ledger: pages neither repeat nor skip, take is validated', async () => {
    const all = (await get('cara', `/api/events/${consultId}/files?take=100`)).body.items.map((f: any) => f.id);
    const p1 = await get('cara', `/api/events/${consultId}/files?skip=0&take=3`);
    const p2 = await get('cara', `/api/events/${consultId}/files?skip=3&take=3`);
    expect([p1.body.items.length, p2.body.items.length, p1.body.total]).toEqual([3, 1, 4]);
    expect([...p1.body.items, ...p2.body.items].map((f: any) => f.id)).toEqual(all);
    const q = await gql('cara', FILES, { e: consultId, p: { skip: 2, take: 2 } });
    expect(q.body.data.eventFiles.items.map((i: any) => i.file.id)).toEqual(all.slice(2, 4));
    const ledger = await get('cara', `/api/events/${consultId}/ledger?skip=2&take=5`);
    expect(ledger.body).toMatchObject({ total: 3, skip: 2, take: 5 });
    expect(ledger.body.items).toHaveLength(1);
    const bad = await get('cara', `/api/events/${consultId}/files?take=0`);
    expect({ status: bad.status, code: bad.body.code, field: bad.body.errors?.[0]?.field }).toEqual({
      status: 400,
      code: 'validation_failed',
      field: 'query.take',
    });
    const clamped = await get('cara', `/api/events/${consultId}/ledger?take=100000`);
    expect(clamped.body.take).toBe(100);
  });

  it("refuses another event's patient and another tenant's event as absent", async () => {
    for (const path of [`/api/events/${consultId}/files`, `/api/events/get/${consultId}`]) {
      const r = await get('pia', path);
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 404, code: 'event_not_found' });
    }
    expect((await gql('pia', FILES, { e: consultId })).body.errors[0].extensions.code).toBe('event_not_found');
    // The other tenant's event id, asked on this tenant's host, by a member and by an administrator.
    for (const user of ['cara', 'ada']) {
      for (const op of ['files', 'ledger']) {
        const r = await get(user, `/api/events/${foreignEventId}/${op}`);
        expect({ user, op, status: r.status, code: r.body.code }).toEqual({
          user,
          op,
          status: 404,
          code: 'event_not_found',
        });
      }
    }
    // The other tenant's token is refused on this tenant's host.
    const cross = await node.http.get(`/api/events/${foreignEventId}/files`, { tenant: 'acme', token: tokens.olga });
    expect({ status: cross.status, code: cross.body.code }).toEqual({ status: 403, code: 'wrong_tenant' });
  });

  it("lists a call session's files to the call's members and administrators only; only members upload into it", async () => {
    const db = node.infra.mongo.tenantDb('acme');
    const sessionId = `call-${new Types.ObjectId().toHexString()}`;
    await db.models.CallRecord.create({
      _id: sessionId,
      callerId: new Types.ObjectId(ids.cara),
      participantIds: [new Types.ObjectId(ids.pat)],
      status: 'ended',
      startedAt: new Date(),
    });
    const fromPat = await upload('pat', { sessionId });
    const fromCara = await upload('cara', { sessionId }, 28);
    for (const user of ['cara', 'pat', 'ada']) {
      const r = await get(user, `/api/sessions/${sessionId}/files`);
      expect({ user, status: r.status, ids: r.body.items?.map((f: any) => f.id).sort() }).toEqual({
        user,
        status: 200,
        ids: [fromPat, fromCara].sort(),
      });
    }
    // Someone outside the call cannot plant a file into its record (nor into an unknown session).
    const form = async (s: string) => {
      const { body, headers } = multipart([
        { name: 'sessionId', value: s },
        { name: 'file', file: { fileName: 'planted.png', content: await png(29, 29) } },
      ]);
      return node.http.post('/api/media/upload', { tenant: 'acme', token: tokens.hank, rawBody: body, headers });
    };
    for (const s of [sessionId, `call-${new Types.ObjectId().toHexString()}`]) {
      const planted = await form(s);
      expect({ status: planted.status, code: planted.body.code }).toEqual({ status: 404, code: 'call_not_found' });
    }
    expect(await db.models.MediaFile.countDocuments({ sessionId })).toBe(2);
    const hank = await get('hank', `/api/sessions/${sessionId}/files`);
    expect({ status: hank.status, code: hank.body.code }).toEqual({ status: 404, code: 'call_not_found' });
    const pia = await get('pia', `/api/sessions/${sessionId}/files`);
    expect({ status: pia.status, code: pia.body.code }).toEqual({ status: 404, code: 'call_not_found' });
    const unknown = await get('ada', `/api/sessions/call-nothing/files`);
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'call_not_found' });
    const q = await gql('pat', SESSION, { s: sessionId });
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.sessionFiles.total).toBe(2);
    expect((await gql('pia', SESSION, { s: sessionId })).body.errors[0].extensions.code).toBe('call_not_found');
  });
});
