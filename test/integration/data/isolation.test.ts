import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import type { TenantDb } from '../../../src/data/mongo.js';
import { sortKeys } from '../../../src/data/models/user.model.js';

function user(username: string, displayName: string, _id: Types.ObjectId) {
  return { _id, username, idpSubject: username, displayName, ...sortKeys(displayName) };
}

describe('data layer: tenant isolation', () => {
  let node: TestNode;
  let alpha: TenantDb;
  let beta: TenantDb;
  const sharedId = new Types.ObjectId();

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'alpha', displayName: 'Alpha Clinic' });
    await node.services.tenants.create({ name: 'beta', displayName: 'Beta Clinic' });
    alpha = (await node.services.tenants.require('alpha')).db;
    beta = (await node.services.tenants.require('beta')).db;
    await alpha.models.User.create(user('alice', 'Alice of Alpha', sharedId));
    await beta.models.User.create(user('alice', 'Alice of Beta', sharedId));
  });
  afterAll(async () => node.destroy());

  it('keeps each tenant in its own database', () => {
    expect(alpha.conn.name).toBe(node.infra.mongo.dbName('alpha'));
    expect(beta.conn.name).toBe(node.infra.mongo.dbName('beta'));
    expect(alpha.conn.name).not.toBe(beta.conn.name);
    expect(alpha.models.User.db.name).not.toBe(beta.models.User.db.name);
    expect(alpha.models.User).not.toBe(beta.models.User);
  });

  it('lets the same id and username exist in two tenants, each reading only its own', async () => {
    const a = await alpha.models.User.findById(sharedId).lean().exec();
    const b = await beta.models.User.findOne({ username: 'alice' }).lean().exec();
    expect(a?.displayName).toBe('Alice of Alpha');
    expect(b?.displayName).toBe('Alice of Beta');
    expect(await alpha.models.User.countDocuments({ username: 'alice' }).exec()).toBe(1);
  });

  it('updates and deletes in one tenant without touching the other', async () => {
    await alpha.models.User.updateOne({ _id: sharedId }, { $set: { title: 'Dr' } }).exec();
    expect((await beta.models.User.findById(sharedId).lean().exec())?.title).toBeUndefined();
    const eventId = new Types.ObjectId();
    const event = {
      _id: eventId,
      name: 'Check-up',
      nameLower: 'check-up',
      startAt: new Date(),
      endAt: new Date(),
      organizerId: sharedId,
      meetingCode: 'same-code',
    };
    await alpha.models.Event.create(event);
    await beta.models.Event.create(event);
    await beta.models.Event.deleteMany({}).exec();
    expect(await alpha.models.Event.countDocuments({ _id: eventId }).exec()).toBe(1);
    expect(await beta.models.Event.countDocuments().exec()).toBe(0);
  });

  it('gives every tenant its own seed data', async () => {
    await alpha.models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { displayName: 'Alpha renamed' } }).exec();
    const betaSettings = await beta.models.TenantConfig.findById('tenant').lean().exec();
    expect(betaSettings?.displayName).toBe('Beta Clinic');
  });

  it('reaches a tenant database only through a known tenant name', async () => {
    await expect(node.services.tenants.require('gamma')).rejects.toMatchObject({ code: 'tenant_not_found' });
    for (const hostile of ['alpha.beta', '../beta', 'ALPHA$', 'a', '']) {
      await expect(node.services.tenants.require(hostile)).rejects.toMatchObject({ code: 'tenant_not_found' });
    }
  });

  it('does not serve a suspended tenant', async () => {
    await node.services.tenants.create({ name: 'paused', displayName: 'Paused Clinic' });
    await node.infra.mongo.catalog.Tenant.updateOne({ name: 'paused' }, { $set: { status: 'suspended' } }).exec();
    expect(await node.services.tenants.resolve('paused')).toBeNull();
    const ping = await node.http.get('/api/tenant/ping', { tenant: 'paused' });
    expect(ping.status).toBe(404);
  });
});
