import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { as, world, type World } from './fixtures.js';

describe('notifications, peripherals and admin helpers', () => {
  let w: World;
  beforeAll(async () => {
    w = await world('npa', 'npb');
  });
  afterAll(async () => w.node.destroy());

  describe('notifications', () => {
    it('saves, replaces, reads and clears the current notice', async () => {
      expect((await as(w, w.a.pat).get('/api/notification/current')).body).toEqual({ notice: null });
      const first = await as(w, w.a.admin).post('/api/notification/save', {
        title: 'One',
        body: 'first',
        severity: 'warning',
      });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ title: 'One', severity: 'warning', current: true });
      const second = await as(w, w.a.admin).post('/api/notification/save', { title: 'Two', body: 'second' });
      const cur = await as(w, w.a.pat).get('/api/notification/current');
      expect(cur.body.notice).toMatchObject({ id: second.body.id, title: 'Two', severity: 'info' });
      // The replaced notice can still be acknowledged; ids of other tenants cannot.
      expect((await as(w, w.a.pat).post(`/api/contacts/notificationSeen/${first.body.id}`)).body).toEqual({
        noticeId: first.body.id,
        seen: true,
      });
      expect((await as(w, w.b.pat, w.tenantB).post(`/api/contacts/notificationSeen/${second.body.id}`)).status).toBe(
        404,
      );
      expect((await as(w, w.a.pat).post('/api/contacts/notificationSeen/zz')).body.errors[0].field).toBe(
        'params.noticeId',
      );
      expect((await as(w, w.a.admin).post('/api/notification/clear')).body).toEqual({ cleared: true });
      expect((await as(w, w.a.admin).post('/api/notification/clear')).body).toEqual({ cleared: false });
      expect((await as(w, w.a.pat).get('/api/notification/current')).body).toEqual({ notice: null });
    });

    it('validates and guards notices', async () => {
      const bad = await as(w, w.a.admin).post('/api/notification/save', { title: '', body: 'x', severity: 'loud' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(
        expect.arrayContaining(['title', 'severity']),
      );
      expect((await as(w, w.a.alice).post('/api/notification/save', { title: 't', body: 'b' })).status).toBe(403);
      expect((await as(w, w.a.alice).post('/api/notification/clear')).status).toBe(403);
      expect((await w.node.http.get('/api/notification/current', { tenant: w.tenantA })).status).toBe(401);
    });
  });

  describe('peripherals', () => {
    it('lists types and maps devices idempotently with a stable key', async () => {
      const types = await as(w, w.a.dev).get('/api/peripheral/types');
      expect(types.status).toBe(200);
      expect(types.body.map((t: { key: string }) => t.key)).toEqual(
        expect.arrayContaining(['headset', 'camera', 'usb-stethoscope']),
      );
      const cam = types.body.find((t: { key: string }) => t.key === 'camera').id;
      const one = await as(w, w.a.dev).post(`/api/peripheral/getDevice/${cam}`, { physicalIds: ['usb:1234', 'SN-9'] });
      expect(one.status).toBe(200);
      const two = await as(w, w.a.alice).post(`/api/peripheral/getDevice/${cam}`, {
        physicalIds: ['SN-9', 'usb:1234', 'SN-9'],
      });
      expect(two.body.device.id).toBe(one.body.device.id);
      expect(two.body.deviceKey).toBe(one.body.deviceKey);
      expect(one.body.device).toMatchObject({
        typeId: cam,
        typeKey: 'camera',
        physicalIds: ['SN-9', 'usb:1234'],
        personal: false,
      });
      const other = await as(w, w.a.dev).post(`/api/peripheral/getDevice/${cam}`, { physicalIds: ['SN-10'] });
      expect(other.body.deviceKey).not.toBe(one.body.deviceKey);
      const stored = await w.node.infra.mongo.tenantDb(w.tenantA).models.Device.findById(one.body.device.id).lean();
      expect(JSON.stringify(stored)).not.toContain(one.body.deviceKey);
      // Same physical ids in another tenant: another device, another key.
      const bTypes = (await as(w, w.b.dev, w.tenantB).get('/api/peripheral/types')).body;
      const bCam = bTypes.find((t: { key: string }) => t.key === 'camera').id;
      const b = await as(w, w.b.dev, w.tenantB).post(`/api/peripheral/getDevice/${bCam}`, {
        physicalIds: ['usb:1234', 'SN-9'],
      });
      expect(b.body.deviceKey).not.toBe(one.body.deviceKey);
      expect((await as(w, w.a.dev).post(`/api/peripheral/getDevice/${bCam}`, { physicalIds: ['x'] })).body.code).toBe(
        'peripheral_type_not_found',
      );
      expect(
        (await as(w, w.a.dev).post(`/api/peripheral/getDevice/${cam}`, { physicalIds: [] })).body.errors[0].field,
      ).toBe('physicalIds');
      expect((await as(w, w.a.pat).post(`/api/peripheral/getDevice/${cam}`, { physicalIds: ['x'] })).status).toBe(403);
    });

    it("lists the caller's own and shared devices", async () => {
      const cam = (await as(w, w.a.alice).get('/api/peripheral/types')).body.find(
        (t: { key: string }) => t.key === 'headset',
      ).id;
      const mine = await as(w, w.a.alice).post(`/api/peripheral/getDevice/${cam}`, {
        physicalIds: ['alice-own'],
        personal: true,
      });
      expect(mine.body.device.personal).toBe(true);
      const aliceSees = (await as(w, w.a.alice).get('/api/peripheral/devices')).body.map((d: { id: string }) => d.id);
      const bobSees = (await as(w, w.a.bob).get('/api/peripheral/devices')).body.map((d: { id: string }) => d.id);
      expect(aliceSees).toContain(mine.body.device.id);
      expect(bobSees).not.toContain(mine.body.device.id);
      expect(bobSees.length).toBe(aliceSees.length - 1);
      expect((await as(w, w.a.pat).get('/api/peripheral/devices')).status).toBe(403);
    });
  });

  describe('admin helpers', () => {
    it('reports last seen, online state and connectivity', async () => {
      await w.node.services.presence.connected(w.tenantA, w.a.pat.id, 'node-x', 'sock-1');
      await w.node.services.presence.flushLastSeen();
      const byContact = await as(w, w.a.sam).get(`/api/admin/lastSeen/${w.a.pat.id}`);
      expect(byContact.status).toBe(200);
      expect(byContact.body).toMatchObject({ userId: w.a.pat.id, username: 'pat', online: true });
      expect(byContact.body.lastSeenAt).toEqual(expect.any(String));
      expect((await as(w, w.a.sam).get(`/api/admin/isOnline/${w.tenantA}/pat`)).body).toEqual({
        userId: w.a.pat.id,
        username: 'pat',
        online: true,
      });
      await w.node.services.presence.connected(w.tenantA, w.a.pat.id, 'node-y', 'sock-2');
      expect((await as(w, w.a.sam).get(`/api/admin/user/${w.tenantA}/pat`)).body.connections).toBe(2);
      await w.node.services.presence.disconnected(w.tenantA, w.a.pat.id, 'node-y', 'sock-2');
      await w.node.services.presence.disconnected(w.tenantA, w.a.pat.id, 'node-x', 'sock-1');
      expect((await as(w, w.a.sam).get(`/api/admin/lastSeen/${w.tenantA}/PAT`)).body.online).toBe(false);
      const info = await as(w, w.a.sam).get(`/api/admin/user/${w.tenantA}/pat`);
      expect(info.body).toMatchObject({
        username: 'pat',
        displayName: 'Pat Patient',
        kind: 'person',
        role: 'patient',
        status: 'active',
        online: false,
        connections: 0,
      });
    });

    it('refuses other tenants, unknown users and callers without presence:read', async () => {
      expect((await as(w, w.a.sam).get(`/api/admin/user/${w.tenantB}/pat`)).body.code).toBe('user_not_found');
      expect((await as(w, w.a.sam).get(`/api/admin/isOnline/${w.tenantA}/nobody`)).status).toBe(404);
      expect((await as(w, w.a.sam).get(`/api/admin/lastSeen/${w.b.pat.id}`)).body.code).toBe('contact_not_found');
      expect((await as(w, w.a.sam).get(`/api/admin/lastSeen/${new Types.ObjectId().toHexString()}`)).status).toBe(404);
      expect((await as(w, w.a.sam).get('/api/admin/lastSeen/bad-id')).body.errors[0].field).toBe('params.contactId');
      expect((await as(w, w.a.alice).get(`/api/admin/isOnline/${w.tenantA}/pat`)).status).toBe(403);
      expect((await w.node.http.get(`/api/admin/user/${w.tenantA}/pat`, { tenant: w.tenantA })).status).toBe(401);
    });
  });
});
