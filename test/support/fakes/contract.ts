import type { Types } from 'mongoose';
import { Mongo } from '../../../src/data/mongo.js';
import { migrateTenant } from '../../../src/data/migrations/migrator.js';
import { UserRepository } from '../../../src/data/repositories/user.repository.js';
import { CredentialRepository } from '../../../src/data/repositories/credential.repository.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { GroupRepository } from '../../../src/data/repositories/group.repository.js';
import { FavouriteRepository } from '../../../src/data/repositories/favourite.repository.js';
import { CallRecordRepository } from '../../../src/data/repositories/call-record.repository.js';
import { TenantConfigRepository } from '../../../src/data/repositories/tenant-config.repository.js';
import { RoleRepository } from '../../../src/data/repositories/role.repository.js';
import { SessionRepository } from '../../../src/data/repositories/session.repository.js';
import { OfflineTokenRepository } from '../../../src/data/repositories/offline-token.repository.js';
import { AuditRepository } from '../../../src/data/repositories/audit.repository.js';
import { DeviceRepository } from '../../../src/data/repositories/device.repository.js';
import { uniqueId } from '../env.js';
import { fakeRepositories, FakeMongo } from './index.js';
import { FakeDeviceRepository } from './directory.fake.js';

/** Writes a contract case needs to arrange what no repository method writes (a disabled user, a headset). */
export interface RawWrites {
  setUser(id: Types.ObjectId | string, set: Record<string, unknown>): Promise<void>;
  insertDevice(doc: Record<string, unknown>): Promise<void>;
  insertRole(doc: Record<string, unknown>): Promise<void>;
}

/** One side of a contract: the repositories of a tenant, and the raw writes of its server. */
export interface ContractSide {
  /** A new tenant, as its migrations leave it (built-in roles, the default Settings document). */
  provision(tenant: string): Promise<void>;
  repos(tenant: string): {
    users: Omit<UserRepository, never>;
    credentials: Omit<CredentialRepository, never>;
    events: Omit<EventRepository, never>;
    groups: Omit<GroupRepository, never>;
    favourites: Omit<FavouriteRepository, never>;
    calls: Omit<CallRecordRepository, never>;
    settings: Omit<TenantConfigRepository, never>;
    roles: Omit<RoleRepository, never>;
    sessions: Omit<SessionRepository, never>;
    offlineTokens: Omit<OfflineTokenRepository, never>;
    audits: Omit<AuditRepository, never>;
    devices: Pick<DeviceRepository, 'findAvailable'>;
  };
  raw(tenant: string): RawWrites;
  close(): Promise<void>;
}

/** The fake side: the in-memory database of test/support/fakes. */
async function fakeSide(): Promise<ContractSide> {
  const mongo = new FakeMongo();
  const repos = fakeRepositories(mongo);
  return {
    provision: async (t) => void mongo.provision(t),
    repos: (t) => ({
      users: repos.users(t),
      credentials: repos.credentials(t),
      events: repos.events(t),
      groups: repos.groups(t),
      favourites: repos.favourites(t),
      calls: repos.calls(t),
      settings: repos.settings(t),
      roles: repos.roles(t),
      sessions: repos.sessions(t),
      offlineTokens: repos.offlineTokens(t),
      audits: repos.audits(t),
      devices: new FakeDeviceRepository(mongo.tenantDb(t)),
    }),
    raw: (t) => {
      const db = mongo.tenantDb(t);
      return {
        setUser: async (id, set) => {
          const users = db.collection('User');
          const u = users.byId(id);
          if (u) users.update(u, (d) => void Object.assign(d, set));
        },
        insertDevice: async (doc) => void db.collection('Device').insert(doc),
        insertRole: async (doc) => void db.collection('Role').insert(doc),
      };
    },
    close: async () => undefined,
  };
}

/** The real side: the product's repositories on the test MongoDB-protocol server, in databases of their own. */
async function realSide(): Promise<ContractSide> {
  const id = uniqueId();
  const mongo = await Mongo.connect({
    uri: process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27028/',
    catalogDb: `fc_${id}`,
    tenantDbPrefix: `ft_${id}_`,
    timeoutMs: 10_000,
  });
  const provisioned: string[] = [];
  const db = (t: string) => mongo.tenantDb(t);
  return {
    provision: async (t) => {
      provisioned.push(t);
      await migrateTenant(db(t), { displayName: t });
    },
    repos: (t) => ({
      users: new UserRepository(db(t)),
      credentials: new CredentialRepository(db(t)),
      events: new EventRepository(db(t)),
      groups: new GroupRepository(db(t)),
      favourites: new FavouriteRepository(db(t)),
      calls: new CallRecordRepository(db(t)),
      settings: new TenantConfigRepository(db(t)),
      roles: new RoleRepository(db(t)),
      sessions: new SessionRepository(db(t)),
      offlineTokens: new OfflineTokenRepository(db(t)),
      audits: new AuditRepository(db(t)),
      devices: new DeviceRepository(db(t)),
    }),
    raw: (t) => ({
      setUser: async (userId, set) => void (await db(t).models.User.updateOne({ _id: userId }, { $set: set }).exec()),
      insertDevice: async (doc) => void (await db(t).models.Device.create(doc)),
      insertRole: async (doc) => void (await db(t).models.Role.create(doc)),
    }),
    close: async () => {
      for (const t of provisioned) await mongo.dropTenantDb(t);
      await mongo.close();
    },
  };
}

/**
 * The two sides every repository contract runs on (`describe.each(CONTRACT_SIDES)`): the same cases
 * against the fake and against the real repository on the test server, so the fake cannot drift from
 * what the real one does.
 */
export const CONTRACT_SIDES: [string, () => Promise<ContractSide>][] = [
  ['the in-memory fake', fakeSide],
  ['the real repository on the test MongoDB-protocol server', realSide],
];
