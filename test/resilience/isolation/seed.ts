import { randomUUID } from 'node:crypto';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { ImportRepository } from '../../../src/data/repositories/import.repository.js';
import { PendingUserRepository } from '../../../src/data/repositories/pending-user.repository.js';
import { Types } from 'mongoose';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';
import { ParticipantLogRepository } from '../../../src/data/repositories/participant-log.repository.js';
import type { TestNode } from '../../support/node.js';
import { settleNextJob } from '../../support/jobs.js';

export const ROLES = Object.keys(BUILTIN_ROLES);

export interface SeededTenant {
  name: string;
  /** Recognisable string written into every seeded name and title of this tenant. */
  marker: string;
  users: Record<string, { id: string; username: string; token: string }>;
  groupId: string;
  eventId: string;
  meetingCode: string;
  noticeId: string;
  /** A completed pending-users import with pending users waiting for activation. */
  importId: string;
  /** A webhook subscription whose description carries the marker. */
  subscriptionId: string;
  /** A call session (clinician calls patient) with a file the patient uploaded into it. */
  sessionId: string;
  /** A failed job of the tenant (telemetry completion), its failure reason carrying the marker. */
  failedJobId: string;
  /** Users the hub cases need besides the caller: an event organizer, a callee and a headset account. */
  helpers: Record<'host' | 'peer' | 'headset', { id: string; username: string; token: string }>;
}

/**
 * One user per built-in role plus a group, an event (with a meeting code) and a notice, all carrying
 * the tenant's marker in display names, names and titles (never in usernames or ids, which a caller
 * may legitimately send and see echoed).
 */
export async function seedTenant(node: TestNode, name: string, marker: string): Promise<SeededTenant> {
  const users: SeededTenant['users'] = {};
  // The tokens issued here serve the whole test file: with the tenant's default lifetime (300 s) a run
  // slowed down by a loaded machine outlives them and every later cell answers 401 token_expired. They get
  // the longest lifetime the security rules allow instead.
  await node.services.tenants.ensure({ name });
  await node.infra.mongo
    .tenantDb(name)
    .models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'security.session.accessTokenTtlSeconds': 3600 } })
    .exec();
  node.services.auth.rules.forget(name);
  for (const role of ROLES) {
    const username = `${role}-${name}`;
    const id = await createUser(node, name, {
      username,
      role,
      displayName: `${role} ${marker}`,
      kind: role === 'device' ? 'device' : 'person',
    });
    users[role] = { id: String(id), username, token: await tokenFor(node, name, username) };
  }
  const helpers = {} as SeededTenant['helpers'];
  for (const [key, role] of [
    ['host', 'clinician'],
    ['peer', 'patient'],
    ['headset', 'device'],
  ] as const) {
    const username = `helper-${key}-${name}`;
    const id = await createUser(node, name, {
      username,
      role,
      displayName: `${key} ${marker}`,
      kind: role === 'device' ? 'device' : 'person',
    });
    helpers[key] = { id: String(id), username, token: await tokenFor(node, name, username) };
  }
  const as = (role: string) => ({ tenant: name, token: users[role]!.token });
  const group = await node.http.post('/api/contacts/group/create', {
    ...as('clinician'),
    body: { name: `Ward ${marker}`, participantIds: [users.patient!.id] },
  });
  const start = new Date(Date.now() + 3600_000);
  const event = await node.http.post('/api/events/create', {
    ...as('clinician'),
    body: {
      name: `Consult ${marker}`,
      description: `Notes ${marker}`,
      startAt: start.toISOString(),
      endAt: new Date(start.getTime() + 1800_000).toISOString(),
      participants: [{ userId: users.patient!.id }],
    },
  });
  const notice = await node.http.post('/api/notification/save', {
    ...as('admin'),
    body: { title: `Notice ${marker}`, body: `Body ${marker}` },
  });
  // An import as the import job leaves it (the matrix node runs no workers): pending users to activate.
  const importId = randomUUID();
  const db = node.infra.mongo.tenantDb(name);
  await new ImportRepository(db).create({
    id: importId,
    fileHash: 'a'.repeat(64),
    fileName: `staff-${name}.xlsx`,
    requestedBy: users.admin!.id,
  });
  await new PendingUserRepository(db).upsertMany(
    Array.from({ length: 20 }, (_, i) => ({
      username: `pending${i}-${name}`,
      displayName: `Pending ${i} ${marker}`,
      role: 'patient',
      rowNumber: i + 2,
    })),
    importId,
  );
  // Loopback is allowed by the matrix's operator settings; the matrix node runs no workers, so nothing is sent.
  const subscription = await node.http.post('/api/webhooks/subscriptions', {
    ...as('admin'),
    body: { url: 'http://127.0.0.1:9/hook', types: ['consultation.scheduled'], description: `Hook ${marker}` },
  });
  // The event's records: a ledger row and a file of the event and of a call session, named with the marker.
  const eventId = String(event.body?.id);
  await new ParticipantLogRepository(db).upsertMany(eventId, `conf-${name}`, [
    {
      participantKey: users.patient!.id,
      userId: users.patient!.id,
      displayName: `Patient ${marker}`,
      device: `ios ${marker}`,
      joinedAt: new Date(start.getTime()),
      leftAt: new Date(start.getTime() + 60_000),
      durationSeconds: 60,
    },
  ]);
  const sessionId = `call-${name}`;
  await db.models.CallRecord.create({
    _id: sessionId,
    callerId: new Types.ObjectId(users.clinician!.id),
    participantIds: [new Types.ObjectId(users.patient!.id)],
    status: 'ended',
    startedAt: new Date(),
  });
  const form = multipart([
    { name: 'eventId', value: eventId },
    { name: 'sessionId', value: sessionId },
    { name: 'file', file: { fileName: `scan-${marker}.png`, content: await png(20, 20) } },
  ]);
  const file = await node.http.post('/api/media/upload', {
    ...as('patient'),
    rawBody: form.body,
    headers: form.headers,
  });
  // A failed job as a worker leaves it (the matrix node runs no workers), with the marker in its reason;
  // in the telemetry queue, which nothing else of the seed fills (uploads queue thumbnails in media).
  const { id: failedJobId } = await node.services.jobs.enqueue('telemetry-completion', {
    tenant: name,
    eventId,
    conferenceId: `conf-failed-${name}`,
  });
  await settleNextJob(node, 'telemetry', { fail: `Completion failed ${marker}` }, failedJobId);
  const data = (r: { status: number; body: any }) => {
    if (r.status >= 300) throw new Error(`seeding ${name} failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data ?? r.body;
  };
  data(file);
  return {
    name,
    marker,
    users,
    groupId: data(group).id,
    eventId: data(event).id,
    meetingCode: data(event).meetingCode,
    noticeId: data(notice).id,
    importId,
    subscriptionId: data(subscription).subscription.id,
    sessionId,
    failedJobId,
    helpers,
  };
}

/** Path parameter values taken from one seeded tenant (own ids or, for cross-tenant probes, the other's). */
export function paramValues(t: SeededTenant, caller: string): Record<string, string> {
  return {
    groupId: t.groupId,
    noticeId: t.noticeId,
    eventId: t.eventId,
    contactId: t.users.patient!.id,
    deviceId: t.users.device!.id,
    deviceTypeId: t.users.device!.id,
    meetingCode: t.meetingCode,
    tenant: t.name,
    tenantId: t.name,
    tenantName: t.name,
    username: t.users.patient!.username,
    userId: t.users[caller]!.id,
    hash: 'a'.repeat(64),
    filePath: 'shared-file',
    container: 'media',
    '*path': 'a.png',
    importId: t.importId,
    subscriptionId: t.subscriptionId,
    sessionId: t.sessionId,
    jobId: t.failedJobId,
  };
}

/**
 * A body naming the same tenant's ids in every field an endpoint might read them from, and otherwise
 * valid for each endpoint that takes ids in its body, so the own tenant's call succeeds where the role
 * may make it: the user acted on is the caller (their own PIN), or for impersonation and role changes
 * the tenant's patient, whose role is kept as it is.
 */
export function bodyFor(t: SeededTenant, caller: string, op?: string): Record<string, unknown> {
  const onPatient = op === 'account.impersonate' || op === 'account.assignRole';
  const start = new Date(Date.now() + 7 * 86_400_000);
  return {
    groupId: t.groupId,
    eventId: t.eventId,
    noticeId: t.noticeId,
    userId: t.users[onPatient ? 'patient' : caller]!.id,
    contactId: t.users.patient!.id,
    participantIds: [t.users.patient!.id],
    participants: [{ userId: t.users.patient!.id }],
    isFavourite: true,
    favourite: true,
    name: 'renamed',
    role: 'patient',
    importId: t.importId,
    limit: 1,
    newPin: '4827',
    requestId: 'iso-consent',
    consent: true,
    startAt: start.toISOString(),
    endAt: new Date(start.getTime() + 1_800_000).toISOString(),
  };
}
