import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DOCUMENTED_GROUPS as ALL, openApiPath } from '../../../src/http/openapi/openapi.js';

/** The directory, scheduling and administration operations (sign-in, media and import have their own isolation tests). */
const DIRECTORY = new Set(['Contacts', 'Events', 'Meetings', 'Notifications', 'Peripherals']);
const DOCUMENTED_GROUPS = ALL.map((g) => ({
  ...g,
  routes: g.routes.filter(
    (r) => DIRECTORY.has(g.tag) || /^admin\.(lastSeen|isOnline|user)|^tenant\.startRecording$/.test(r.operationId),
  ),
})).filter((g) => g.routes.length);
import { as, world, type World } from './fixtures.js';
import { inHours } from '../../support/events.js';

interface BData {
  eventId: string;
  meetingCode: string;
  groupId: string;
  noticeId: string;
  deviceId: string;
  deviceKey: string;
  typeId: string;
  contactId: string;
}

/** For each operation: the path params and body that carry tenant B's ids (null: no ids to carry). */
function inputs(
  b: BData,
  tenantB: string,
): Record<string, { params?: Record<string, string>; query?: string; body?: unknown } | null> {
  return {
    'contacts.get': null,
    'contacts.groupUsers': { params: { groupId: b.groupId } },
    'contacts.me': null,
    'contacts.setFavourite': { body: { contactId: b.contactId } },
    'contacts.update': null,
    'contacts.groupCreate': { body: { name: 'x', participantIds: [b.contactId] } },
    'contacts.groupRename': { body: { groupId: b.groupId, name: 'x' } },
    'contacts.groupAdd': { body: { groupId: b.groupId, participantIds: [b.contactId] } },
    'contacts.groupRemove': { body: { groupId: b.groupId, participantIds: [b.contactId] } },
    'contacts.notificationSeen': { params: { noticeId: b.noticeId } },
    'events.list': null,
    'events.get': { params: { eventId: b.eventId } },
    'events.getParticipants': { params: { eventId: b.eventId } },
    'events.create': {
      body: { name: 'x', startAt: inHours(1), endAt: inHours(2), participants: [{ userId: b.contactId }] },
    },
    'events.update': { body: { eventId: b.eventId, name: 'hijacked' } },
    'events.cancel': { body: { eventIds: [b.eventId] } },
    'events.ledger': { params: { eventId: b.eventId } },
    'events.files': { params: { eventId: b.eventId } },
    'meetings.join': { params: { meetingCode: b.meetingCode } },
    'meetings.waiting': { params: { eventId: b.eventId } },
    'meetings.admit': { params: { eventId: b.eventId }, body: { userId: b.contactId } },
    'meetings.deny': { params: { eventId: b.eventId }, body: { all: true } },
    'meetings.remove': { params: { eventId: b.eventId }, body: { userId: b.contactId } },
    'meetings.end': { params: { eventId: b.eventId }, body: {} },
    'meetings.lock': { params: { eventId: b.eventId }, body: {} },
    'meetings.unlock': { params: { eventId: b.eventId }, body: {} },
    'meetings.transferHost': { params: { eventId: b.eventId }, body: { userId: b.contactId } },
    'meetings.addHost': { params: { eventId: b.eventId }, body: { userId: b.contactId } },
    'meetings.mute': { params: { eventId: b.eventId }, body: { userId: b.contactId } },
    'meetings.hostAccess': { params: { eventId: b.eventId }, body: { userId: b.contactId, grant: true } },
    'meetings.recordingConsent': { params: { eventId: b.eventId }, body: { requestId: 'req-1', consent: true } },
    'meetings.startRapidConnect': { params: { deviceId: b.deviceId } },
    'notification.save': null,
    'notification.clear': null,
    'notification.current': null,
    'peripheral.types': null,
    'peripheral.getDevice': { params: { deviceTypeId: b.typeId }, body: { physicalIds: ['SN-B'] } },
    'peripheral.devices': null,
    // Tenant B's device account and a hardware id: registered, unregistered, paired only inside tenant A.
    'peripheral.register': { body: { hardwareId: 'HS-B-1', accountId: b.contactId } },
    'peripheral.registrations': null,
    'peripheral.unregister': { body: { hardwareId: 'HS-B-1' } },
    // A device account's own pairing code names no other tenant's data: checked for leaks only.
    'peripheral.pairingCode': null,
    'peripheral.pair': { body: { pairingCode: 'BPAIR123' } },
    'admin.lastSeenContact': { params: { contactId: b.contactId } },
    'admin.lastSeenUser': { params: { tenant: tenantB, username: 'pat' } },
    'admin.isOnline': { params: { tenant: tenantB, username: 'pat' } },
    'admin.user': { params: { tenant: tenantB, username: 'pat' } },
    'tenant.startRecording': { query: `eventId=${b.eventId}` },
    'tenant.stopRecording': { query: `eventId=${b.eventId}` },
  };
}

describe('cross-tenant isolation: every endpoint with tenant B ids and a tenant A token', () => {
  let w: World;
  let b: BData;

  beforeAll(async () => {
    w = await world('xta', 'xtb', { ROLES: 'http,actors' });
    const B = (who: keyof World['b']) => as(w, w.b[who], w.tenantB);
    const ev = (
      await B('alice').post('/api/events/create', {
        name: 'Secret B consult',
        startAt: inHours(1),
        endAt: inHours(2),
        participants: [{ userId: w.b.pat.id }],
      })
    ).body;
    const group = (
      await B('alice').post('/api/contacts/group/create', { name: 'B group', participantIds: [w.b.pat.id] })
    ).body;
    const notice = (await B('admin').post('/api/notification/save', { title: 'B notice', body: 'secret' })).body;
    const typeId = (await B('admin').get('/api/peripheral/types')).body[0].id;
    const dev = (await B('admin').post(`/api/peripheral/getDevice/${typeId}`, { physicalIds: ['SN-B'] })).body;
    b = {
      eventId: ev.id,
      meetingCode: ev.meetingCode,
      groupId: group.id,
      noticeId: notice.id,
      deviceId: dev.device.id,
      deviceKey: dev.deviceKey,
      typeId,
      contactId: w.b.pat.id,
    };
  });
  afterAll(async () => w.node.destroy());

  it('has an input for every documented operation', () => {
    const table = inputs(b, w.tenantB);
    for (const g of DOCUMENTED_GROUPS) for (const r of g.routes) expect(Object.keys(table)).toContain(r.operationId);
  });

  it('answers every endpoint on tenant A without any of tenant B data', async () => {
    const table = inputs(b, w.tenantB);
    const secrets = [
      ...Object.values(b),
      'Secret B consult',
      'B group',
      'B notice',
      ...Object.values(w.b).map((x) => x.id),
    ];
    for (const g of DOCUMENTED_GROUPS) {
      for (const r of g.routes) {
        const input = table[r.operationId];
        let path = openApiPath(g.base, r.path);
        for (const [k, v] of Object.entries(input?.params ?? {})) path = path.replace(`{${k}}`, encodeURIComponent(v));
        if (input?.query) path += `?${input.query}`;
        if (path.includes('{')) throw new Error(`no params for ${r.operationId}`);
        const res =
          r.method === 'get' ? await as(w, w.a.admin).get(path) : await as(w, w.a.admin).post(path, input?.body ?? {});
        // Ids the caller sent may be echoed in the problem detail; anything else of tenant B is a leak.
        const sent = JSON.stringify(input ?? {});
        const leaked = secrets.filter((s) => !sent.includes(s) && res.text.includes(s));
        expect({ op: r.operationId, leaked }).toEqual({ op: r.operationId, leaked: [] });
        if (input)
          expect({ op: r.operationId, status: res.status >= 400 && res.status < 500 }).toEqual({
            op: r.operationId,
            status: true,
          });
      }
    }
  });

  it('answers every GraphQL operation on tenant A without any of tenant B data', async () => {
    const query = `{ me { id contact { id } } tenantConfig { tenant displayName } basicTenantInfo { name } generatePrivateServerConfig { json }
      tenantSecurityRules { loginCodeTtlSeconds } myContacts(isCallList: false) { items { id displayName } } contactAlphabets { letter count }
      hasPin myNotice { id title } }`;
    const all = await w.node.http.post('/graphql', { tenant: w.tenantA, token: w.a.admin.token, body: { query } });
    expect(all.body.errors).toBeUndefined();
    const secrets = [
      ...Object.values(b),
      'Secret B consult',
      'B group',
      'B notice',
      ...Object.values(w.b).map((x) => x.id),
      w.tenantB,
    ];
    expect(secrets.filter((s) => all.text.includes(s))).toEqual([]);
    const group = await w.node.http.post('/graphql', {
      tenant: w.tenantA,
      token: w.a.admin.token,
      body: { query: `{ groupById(groupId: "${b.groupId}") { name participants { id } } }` },
    });
    expect(group.body.errors[0].extensions.code).toBe('group_not_found');
    expect(group.text).not.toContain('B group');
  });

  it("refuses a tenant A token on tenant B's host", async () => {
    const r = await w.node.http.get(`/api/events/get/${b.eventId}`, { tenant: w.tenantB, token: w.a.admin.token });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'wrong_tenant' });
    expect(r.text).not.toContain('Secret B consult');
  });

  it('left tenant B data untouched', async () => {
    const ev = await as(w, w.b.alice, w.tenantB).get(`/api/events/get/${b.eventId}`);
    expect(ev.body).toMatchObject({ name: 'Secret B consult', status: 'scheduled' });
    const g = await as(w, w.b.alice, w.tenantB).get(`/api/contacts/group/users/${b.groupId}`);
    expect(g.body.map((c: { id: string }) => c.id)).toEqual([w.b.pat.id]);
  });
});
