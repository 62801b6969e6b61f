import type { UserRepository } from '../../../src/data/repositories/user.repository.js';
import type { CredentialRepository } from '../../../src/data/repositories/credential.repository.js';
import type { EventRepository } from '../../../src/data/repositories/event.repository.js';
import type { GroupRepository } from '../../../src/data/repositories/group.repository.js';
import type { FavouriteRepository } from '../../../src/data/repositories/favourite.repository.js';
import type { CallRecordRepository } from '../../../src/data/repositories/call-record.repository.js';
import type { TenantConfigRepository } from '../../../src/data/repositories/tenant-config.repository.js';
import type { RoleRepository } from '../../../src/data/repositories/role.repository.js';
import type { SessionRepository } from '../../../src/data/repositories/session.repository.js';
import type { OfflineTokenRepository } from '../../../src/data/repositories/offline-token.repository.js';
import type { AuditRepository } from '../../../src/data/repositories/audit.repository.js';
import { FakeMongo } from './memory-db.js';
import { asReal } from './port.js';
import { FakeCredentialRepository, FakeUserRepository } from './users.fake.js';
import { FakeEventRepository } from './events.fake.js';
import { FakeCallRecordRepository, FakeFavouriteRepository, FakeGroupRepository } from './directory.fake.js';
import { FakeRoleRepository, FakeTenantConfigRepository } from './settings.fake.js';
import { FakeOfflineTokenRepository, FakeSessionRepository } from './sessions.fake.js';
import { FakeAuditRepository } from './audit.fake.js';

export { FakeMongo, DuplicateKeyError, type FakeTenantDb } from './memory-db.js';
export { asReal, type PublicPart } from './port.js';
export { FakeCredentialRepository, FakeUserRepository } from './users.fake.js';
export { FakeEventRepository } from './events.fake.js';
export { FakeCallRecordRepository, FakeFavouriteRepository, FakeGroupRepository } from './directory.fake.js';
export { FakeRoleRepository, FakeTenantConfigRepository } from './settings.fake.js';
export { FakeOfflineTokenRepository, FakeSessionRepository } from './sessions.fake.js';
export { FakeAuditRepository } from './audit.fake.js';
export { FakeClock, FakePinAttemptsStore, FakeRevocationsStore, FakeSigningKeysStore } from './stores.fake.js';
export { FakeVcs } from './vcs.fake.js';

/**
 * The per-tenant repository factories of the composition root (src/core/directory.wiring.ts,
 * src/auth/auth-services.ts, src/composition.ts), on a fake server: what a service test hands the
 * service under test in place of `(t) => new XRepository(infra.mongo.tenantDb(t))`.
 */
export function fakeRepositories(mongo: FakeMongo) {
  const db = (t: string) => mongo.tenantDb(t);
  return {
    users: (t: string) => asReal<UserRepository>(new FakeUserRepository(db(t))),
    credentials: (t: string) => asReal<CredentialRepository>(new FakeCredentialRepository(db(t))),
    events: (t: string) => asReal<EventRepository>(new FakeEventRepository(db(t))),
    groups: (t: string) => asReal<GroupRepository>(new FakeGroupRepository(db(t))),
    favourites: (t: string) => asReal<FavouriteRepository>(new FakeFavouriteRepository(db(t))),
    calls: (t: string) => asReal<CallRecordRepository>(new FakeCallRecordRepository(db(t))),
    settings: (t: string) => asReal<TenantConfigRepository>(new FakeTenantConfigRepository(db(t))),
    roles: (t: string) => asReal<RoleRepository>(new FakeRoleRepository(db(t))),
    sessions: (t: string) => asReal<SessionRepository>(new FakeSessionRepository(db(t))),
    offlineTokens: (t: string) => asReal<OfflineTokenRepository>(new FakeOfflineTokenRepository(db(t))),
    audits: (t: string) => asReal<AuditRepository>(new FakeAuditRepository(db(t))),
  };
}

export type FakeRepositories = ReturnType<typeof fakeRepositories>;
