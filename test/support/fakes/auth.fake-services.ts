import { randomBytes } from 'node:crypto';
import { KeyVault } from '../../../src/auth/key-vault.js';
import { SigningKeys } from '../../../src/auth/signing-keys.js';
import { InternalTokens } from '../../../src/auth/internal-tokens.js';
import { Authorizer } from '../../../src/auth/authorizer.js';
import { Revocations } from '../../../src/auth/revocations.js';
import { RealmLogout } from '../../../src/auth/realm-logout.js';
import { AuditService } from '../../../src/core/audit/audit.service.js';
import { SecurityRulesService } from '../../../src/core/identity/security-rules.service.js';
import { SessionService } from '../../../src/core/identity/session.service.js';
import { PinService } from '../../../src/core/identity/pin.service.js';
import type { PinLockedPush, SecurityAlertPush } from '../../../src/contracts/pushes.js';
import type { SigningKeysStore } from '../../../src/data/stores/signing-keys.store.js';
import type { RevocationsStore } from '../../../src/data/stores/revocations.store.js';
import type { PinAttemptsStore } from '../../../src/data/stores/pin-attempts.store.js';
import { fakeRepositories, FakeMongo } from './index.js';
import { asReal } from './port.js';
import { FakeClock, FakePinAttemptsStore, FakeRevocationsStore, FakeSigningKeysStore } from './stores.fake.js';

/**
 * The identity services as src/auth/auth-services.ts wires them (the real SessionService, PinService,
 * SecurityRulesService, Authorizer, Revocations, InternalTokens and AuditService), on the fake
 * repositories and stores: a sign-in, a refresh or a PIN lock in milliseconds, without Redis or MongoDB.
 * Tokens are signed and verified for real (ES256 keys sealed by a key vault of a random key).
 */
export function fakeAuthServices(
  opts: { mongo?: FakeMongo; clock?: FakeClock; refreshReuseGraceSeconds?: number } = {},
) {
  const mongo = opts.mongo ?? new FakeMongo();
  const clock = opts.clock ?? new FakeClock();
  const repos = fakeRepositories(mongo);
  const vault = new KeyVault({ id: 'fake-kek', key: new Uint8Array(randomBytes(32)) });
  const signingKeys = new SigningKeys({
    store: asReal<SigningKeysStore>(new FakeSigningKeysStore()),
    vault,
    rotationSeconds: 86_400,
    retainSeconds: 86_400,
  });
  const tokens = new InternalTokens({ keys: signingKeys, issuer: 'https://consult.test/', audience: 'consult-api' });
  const authorizer = new Authorizer({ roles: repos.roles });
  const revocationsStore = new FakeRevocationsStore(clock);
  const revocations = new Revocations({
    store: asReal<RevocationsStore>(revocationsStore),
    markerTtlSeconds: 3600,
    idpMarkerTtlSeconds: 3600,
  });
  const realm = new RealmLogout({ revocations });
  const audit = new AuditService({ audits: repos.audits });
  const rules = new SecurityRulesService({ credentials: repos.credentials });
  const sessions = new SessionService({
    ...repos,
    tokens,
    authorizer,
    revocations,
    realm,
    rules,
    audit,
    refreshReuseGraceSeconds: opts.refreshReuseGraceSeconds ?? 10,
  });
  const attempts = new FakePinAttemptsStore(clock);
  /** What PinService pushed: the user's `pinLocked`, the administrators' `securityAlert`. */
  const pushed = {
    locked: [] as { tenant: string; userId: string; push: PinLockedPush }[],
    alerts: [] as { tenant: string; push: SecurityAlertPush }[],
  };
  const pins = new PinService({
    credentials: repos.credentials,
    attempts: asReal<PinAttemptsStore>(attempts),
    rules,
    sessions,
    audit,
    notifyLocked: (tenant, userId, push) => void pushed.locked.push({ tenant, userId, push }),
    alertAdmins: async (tenant, push) => void pushed.alerts.push({ tenant, push }),
  });
  return {
    mongo,
    clock,
    repos,
    tokens,
    authorizer,
    revocations,
    revocationsStore,
    audit,
    rules,
    sessions,
    attempts,
    pins,
    pushed,
  };
}

export type FakeAuthServices = ReturnType<typeof fakeAuthServices>;
