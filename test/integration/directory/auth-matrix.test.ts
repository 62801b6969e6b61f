import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { OPERATIONS, permissionFor } from '../../../src/operations/operation-table.js';
import { DOCUMENTED_GROUPS, openApiPath } from '../../../src/http/openapi/openapi.js';
import { isProbe } from '../../../src/http/routes/route-spec.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { world, type World } from './fixtures.js';

const SAMPLE: Record<string, string> = {
  groupId: '0123456789abcdef01234567',
  noticeId: '0123456789abcdef01234567',
  eventId: '0123456789abcdef01234567',
  contactId: '0123456789abcdef01234567',
  deviceId: '0123456789abcdef01234567',
  deviceTypeId: '0123456789abcdef01234567',
  meetingCode: 'ABCDEFGHJK',
  tenant: 'ama',
  username: 'pat',
  userId: '0123456789abcdef01234567',
  hash: 'abc',
  filePath: 'abc',
  tenantId: 'ama',
  container: 'media',
  path: 'a/b',
  importId: '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d',
  sessionId: 'call-sample',
};

describe('401/403 per the permission table for every directory endpoint and GraphQL operation', () => {
  let w: World;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    w = await world('ama', 'amb');
    await createUser(w.node, w.tenantA, { username: 'gus', role: 'guest', displayName: 'Gus Guest' });
    tokens.guest = await tokenFor(w.node, w.tenantA, 'gus');
    Object.assign(tokens, {
      admin: w.a.admin.token,
      clinician: w.a.alice.token,
      patient: w.a.pat.token,
      support: w.a.sam.token,
      device: w.a.dev.token,
    });
  });
  afterAll(async () => w.node.destroy());

  /** A signed-in role that lacks the permission, if any built-in role does. */
  const lacking = (perm: string) =>
    Object.keys(tokens).find((r) => !(BUILTIN_ROLES[r]!.permissions as readonly string[]).includes(perm));

  it('REST: no token -> 401 unauthenticated; a role without the permission -> 403 permission_denied', async () => {
    let checked403 = 0;
    for (const g of DOCUMENTED_GROUPS) {
      for (const r of g.routes) {
        if (isProbe(r.operationId) || permissionFor(r.operationId) === 'public') continue;
        const path = openApiPath(g.base, r.path).replace(/\{(\w+)\}/g, (_, k: string) => SAMPLE[k]!);
        const call = (token?: string) =>
          w.node.http[r.method](path, { tenant: w.tenantA, ...(token ? { token } : {}), body: {} });
        const anon = await call();
        expect({ op: r.operationId, status: anon.status, code: anon.body.code }).toEqual({
          op: r.operationId,
          status: 401,
          code: 'unauthenticated',
        });
        const required = permissionFor(r.operationId);
        const role = required === 'authenticated' ? undefined : lacking(required);
        if (!role) continue;
        const denied = await call(tokens[role]);
        expect({ op: r.operationId, role, status: denied.status, code: denied.body.code }).toEqual({
          op: r.operationId,
          role,
          status: 403,
          code: 'permission_denied',
        });
        checked403 += 1;
      }
    }
    expect(checked403).toBeGreaterThan(20);
  });

  it('GraphQL: each operation refuses callers without its permission with the same codes', async () => {
    const selections: Record<string, string> = {
      me: 'me { id }',
      tenantConfig: 'tenantConfig { tenant }',
      generatePrivateServerConfig: 'generatePrivateServerConfig { tenant }',
      generatePrivateServerConfigQrCode: 'generatePrivateServerConfigQrCode { dataUrl }',
      tenantSecurityRules: 'tenantSecurityRules { loginCodeTtlSeconds }',
      myContacts: 'myContacts { total }',
      contactAlphabets: 'contactAlphabets { letter }',
      groupById: `groupById(groupId: "${SAMPLE.groupId}") { id }`,
      hasPin: 'hasPin',
      myNotice: 'myNotice { id }',
      basicTenantInfo: 'basicTenantInfo { name }',
      auditTrail: 'auditTrail { next }',
      auditVerify: 'auditVerify { ok }',
      waitingRoom: `waitingRoom(eventId: "${SAMPLE.eventId}") { eventId }`,
      eventLedger: `eventLedger(eventId: "${SAMPLE.eventId}") { total }`,
      eventFiles: `eventFiles(eventId: "${SAMPLE.eventId}") { total }`,
      sessionFiles: `sessionFiles(sessionId: "${SAMPLE.sessionId}") { total }`,
      admit: `mutation { admit(eventId: "${SAMPLE.eventId}", all: true) { eventId } }`,
      deny: `mutation { deny(eventId: "${SAMPLE.eventId}", all: true) { eventId } }`,
      removeParticipant: `mutation { removeParticipant(eventId: "${SAMPLE.eventId}", userId: "${SAMPLE.eventId}") { eventId } }`,
      endMeeting: `mutation { endMeeting(eventId: "${SAMPLE.eventId}") { eventId } }`,
      lockMeeting: `mutation { lockMeeting(eventId: "${SAMPLE.eventId}") { eventId } }`,
      unlockMeeting: `mutation { unlockMeeting(eventId: "${SAMPLE.eventId}") { eventId } }`,
      transferHost: `mutation { transferHost(eventId: "${SAMPLE.eventId}", userId: "${SAMPLE.eventId}") { eventId } }`,
      addHost: `mutation { addHost(eventId: "${SAMPLE.eventId}", userId: "${SAMPLE.eventId}") { eventId } }`,
      muteRequest: `mutation { muteRequest(eventId: "${SAMPLE.eventId}", userId: "${SAMPLE.eventId}") { eventId } }`,
      answerHostAccess: `mutation { answerHostAccess(eventId: "${SAMPLE.eventId}", userId: "${SAMPLE.eventId}", grant: true) { eventId } }`,
      consentToRecording: `mutation { consentToRecording(eventId: "${SAMPLE.eventId}", requestId: "r1", consent: true) { state } }`,
    };
    const ops = Object.entries(OPERATIONS).filter(([, o]) => o.transport === 'graphql');
    expect(ops.map(([, o]) => o.name).sort()).toEqual(Object.keys(selections).sort());
    for (const [id, o] of ops) {
      const q = selections[o.name]!.startsWith('mutation ') ? selections[o.name]! : `{ ${selections[o.name]} }`;
      const send = (token?: string) =>
        w.node.http.post('/graphql', { tenant: w.tenantA, ...(token ? { token } : {}), body: { query: q } });
      const required = permissionFor(id as keyof typeof OPERATIONS);
      const anon = await send();
      if (required === 'public') {
        expect(anon.body.errors).toBeUndefined();
        continue;
      }
      expect({ op: o.name, code: anon.body.errors?.[0]?.extensions?.code }).toEqual({
        op: o.name,
        code: 'unauthenticated',
      });
      const role = lacking(required);
      if (!role) continue;
      const denied = await send(tokens[role]);
      expect({ op: o.name, code: denied.body.errors?.[0]?.extensions?.code }).toEqual({
        op: o.name,
        code: 'permission_denied',
      });
    }
  });
});
