import type { AuthServices } from '../app/index.js';
import type { RedisClient } from '../data/redis.js';
import type { Config } from '../config/config.js';
import type { TenantDb } from '../data/mongo.js';
import type { RedisKeys } from '../data/redis-keys.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { SigningKeys } from '../auth/signing-keys.js';
import { keyVaultFrom } from '../auth/key-vault.js';
import { IdpSecretsService } from '../auth/idp-secrets.js';
import { RealmAccounts } from '../auth/realm-accounts.js';
import { AuditRepository, AuditHeads } from '../data/repositories/audit.repository.js';
import { CredentialRepository } from '../data/repositories/credential.repository.js';
import { RoleRepository } from '../data/repositories/role.repository.js';
import { UserRepository } from '../data/repositories/user.repository.js';
import { LoginCodeRepository } from '../data/repositories/login-code.repository.js';
import { OfflineTokenRepository } from '../data/repositories/offline-token.repository.js';
import { SessionRepository } from '../data/repositories/session.repository.js';
import { AccountSetupRepository } from '../data/repositories/account-setup.repository.js';
import { SigningKeysStore } from '../data/stores/signing-keys.store.js';
import { IdpSecretsStore } from '../data/stores/idp-secrets.store.js';
import { RevocationsStore } from '../data/stores/revocations.store.js';
import { RealmRecordsStore } from '../data/stores/realm-records.store.js';
import { UsedLogoutTokensStore } from '../data/stores/used-logout-tokens.store.js';
import { InternalTokens } from '../auth/internal-tokens.js';
import { OidcRealms } from '../auth/oidc-realms.js';
import { Authorizer } from '../auth/authorizer.js';
import { Revocations } from '../auth/revocations.js';
import { AccessTokenVerifier } from '../auth/access-token-verifier.js';
import { RealmLogout } from '../auth/realm-logout.js';
import { BackchannelLogout } from '../core/identity/backchannel-logout.js';
import { EmbeddedRealmSessions, EMBEDDED_REALM_SESSION_SECONDS } from '../auth/realm-sessions.js';
import type { Principal } from '../kernel/principal.js';
import { AuditService } from '../core/audit/audit.service.js';
import { AuditAnchorStore } from '../data/stores/audit-anchor.store.js';
import { SecurityRulesService } from '../core/identity/security-rules.service.js';
import { SessionService } from '../core/identity/session.service.js';
import { LoginCodeService } from '../core/identity/login-code.service.js';
import type { QrRenderer } from '../qr/qr-renderer.js';
import { PinService } from '../core/identity/pin.service.js';
import type { PinLockedPush, SecurityAlertPush } from '../contracts/pushes.js';
import { BUILTIN_ROLES } from '../kernel/permissions.js';
import { PinAttemptsStore } from '../data/stores/pin-attempts.store.js';
import { rooms } from '../realtime/rooms.js';
import type { PushPublisher } from '../realtime/push-delivery.js';
import { historyPublisher } from '../realtime/redis-publisher.js';
import { OfflineTokenService } from '../core/identity/offline-token.service.js';
import { ImpersonationService } from '../core/identity/impersonation.service.js';
import { SignInService } from '../core/identity/sign-in.service.js';
import { AccountService } from '../core/identity/account.service.js';
import { AccountSetupService } from '../core/identity/account-setup.service.js';

export interface AuthInfra {
  config: Config;
  redis: RedisClient;
  keys: RedisKeys;
  mongo: { tenantDb(tenant: string): TenantDb };
  logger?: Logger;
  /** Counts quick-unlock scrypt checks (pin_checks_total) when given. */
  metrics?: Pick<Metrics, 'counter'>;
  /** The node's QR code renderer (login codes). */
  qr: Pick<QrRenderer, 'render'>;
}

/**
 * Publishes `pinLocked` on the hub push channel, which every hub node relays to its sockets of the user.
 * At-most-once like every push; the audit entry is the durable record.
 */
function pinLockedNotifier(publisher: PushPublisher) {
  return (tenant: string, userId: string, push: PinLockedPush): void => {
    publisher.emit(rooms.user(tenant, userId), 'pinLocked', push);
  };
}

/** At most this many administrators get one alert (a tenant has a handful; the audit entry is the record). */
const ALERTED_ADMINS = 200;

/**
 * Publishes `securityAlert` to every active user whose role grants `users:manage` (those who can reset a
 * PIN), on every hub node. At-most-once like every push; a failure is logged, never thrown at the caller.
 */
function adminAlerter(
  publisher: PushPublisher,
  deps: {
    roles(tenant: string): RoleRepository;
    credentials(tenant: string): CredentialRepository;
    authorizer: Authorizer;
    logger?: Logger;
  },
) {
  return async (tenant: string, push: SecurityAlertPush): Promise<void> => {
    try {
      const names = new Set([...Object.keys(BUILTIN_ROLES), ...(await deps.roles(tenant).list()).map((r) => r.name)]);
      const managing: string[] = [];
      for (const name of names)
        if ((await deps.authorizer.permissionsOf(tenant, name)).has('users:manage')) managing.push(name);
      const ids = await deps.credentials(tenant).activeIdsWithRoles(managing, ALERTED_ADMINS);
      if (ids.length)
        publisher.emit(
          ids.map((id) => rooms.user(tenant, id)),
          'securityAlert',
          push,
        );
    } catch (err) {
      deps.logger?.error({ component: 'auth', err }, 'alerting the administrators of a PIN lock failed');
    }
  };
}

/** Signing keys rotate daily; the previous day's key still verifies tokens minted just before. */
const KEY_ROTATION_SECONDS = 24 * 60 * 60;

/**
 * The key vault and the internal tokens' signing keys, as every node and the keys CLI use them. A
 * retired key verifies for a day after its successor appeared: longer than any access token lives.
 */
export function createSigningKeys(config: Config, redis: RedisClient, keys: RedisKeys) {
  const vault = keyVaultFrom(config.auth.keyEncryption);
  const signingKeys = new SigningKeys({
    store: new SigningKeysStore({ redis, keys }),
    vault,
    rotationSeconds: KEY_ROTATION_SECONDS,
    retainSeconds: KEY_ROTATION_SECONDS,
  });
  const idpSecrets = new IdpSecretsService(new IdpSecretsStore({ redis, keys }), vault);
  return { vault, signingKeys, idpSecrets };
}

/**
 * Wires identity, token and session services (called once by createServices). Each service gets only
 * the I/O it needs; `verifyAccessToken` is the one verification entry point of every transport.
 */
export function createAuthServices(infra: AuthInfra): AuthServices {
  const { config, redis, keys } = infra;
  const tenantDb = (tenant: string) => infra.mongo.tenantDb(tenant);
  /** Repository factories per tenant, for the services converted to take them (issue 19). */
  const auditHeads = new AuditHeads();
  const repos = {
    audits: (t: string) => new AuditRepository(tenantDb(t), auditHeads),
    credentials: (t: string) => new CredentialRepository(tenantDb(t)),
    roles: (t: string) => new RoleRepository(tenantDb(t)),
    loginCodes: (t: string) => new LoginCodeRepository(tenantDb(t)),
    offlineTokens: (t: string) => new OfflineTokenRepository(tenantDb(t)),
    sessions: (t: string) => new SessionRepository(tenantDb(t)),
    setups: (t: string) => new AccountSetupRepository(tenantDb(t)),
  };
  const { vault, signingKeys, idpSecrets } = createSigningKeys(config, redis, keys);
  const tokens = new InternalTokens({
    keys: signingKeys,
    issuer: config.auth.tokenIssuer,
    audience: config.auth.oidc.audience,
  });
  const o = config.auth.oidc;
  const realms = new OidcRealms({
    issuerTemplate: o.issuerTemplate,
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    audience: o.audience,
    jwksCooldownSeconds: o.jwksCooldownSeconds,
  });
  const authorizer = new Authorizer({ roles: repos.roles });
  const idpMaxSeconds = config.auth.idpTokenMaxLifetimeSeconds;
  const revocations = new Revocations({
    store: new RevocationsStore({ redis, keys }),
    markerTtlSeconds: Math.max(config.auth.refreshTokenTtlSeconds, 3600),
    idpMarkerTtlSeconds: Math.max(idpMaxSeconds, EMBEDDED_REALM_SESSION_SECONDS),
  });
  const realmRecords = new RealmRecordsStore({ redis, keys });
  const embedded = o.mode === 'embedded' ? new EmbeddedRealmSessions({ records: realmRecords }) : undefined;
  const realm = new RealmLogout({ revocations, store: embedded });
  const audit = new AuditService({
    audits: repos.audits,
    users: (t) => new UserRepository(tenantDb(t)),
    signer: signingKeys,
    anchors: new AuditAnchorStore({ redis, keys }),
  });
  const accountSetup = new AccountSetupService({
    credentials: repos.credentials,
    setups: repos.setups,
    audit,
    mode: o.mode,
    publicUrl: config.http.publicUrl,
    linkTtlSeconds: config.auth.accountSetupLinkTtlSeconds,
  });
  const verifier = new AccessTokenVerifier({
    internal: tokens,
    realms,
    revocations,
    authorizer,
    credentials: repos.credentials,
    idpTokenMaxLifetimeSeconds: idpMaxSeconds,
    bindOnFirstSignIn: (tenant, claims) => accountSetup.bindOnFirstSignIn(tenant, claims),
  });
  const rules = new SecurityRulesService({ credentials: repos.credentials });
  const sessions = new SessionService({
    ...repos,
    tokens,
    authorizer,
    revocations,
    realm,
    rules,
    audit,
    refreshReuseGraceSeconds: infra.config.auth.refreshReuseGraceSeconds,
  });
  const loginCodes = new LoginCodeService({
    credentials: repos.credentials,
    loginCodes: repos.loginCodes,
    rules,
    sessions,
    audit,
    qr: infra.qr,
  });
  const pinChecks = infra.metrics?.counter(
    'pin_checks_total',
    'scrypt PIN checks of quick unlock (unknown accounts and accounts without a PIN included: they are checked against a decoy hash)',
  );
  const pushes = historyPublisher(redis, keys, infra.config.hub.history, infra.logger);
  const pins = new PinService({
    credentials: repos.credentials,
    attempts: new PinAttemptsStore({ redis, keys }),
    rules,
    sessions,
    audit,
    notifyLocked: pinLockedNotifier(pushes),
    onPinCheck: () => pinChecks?.inc(),
    alertAdmins: adminAlerter(pushes, {
      roles: repos.roles,
      credentials: repos.credentials,
      authorizer,
      logger: infra.logger,
    }),
  });
  const offlineTokens = new OfflineTokenService({
    credentials: repos.credentials,
    offlineTokens: repos.offlineTokens,
    rules,
    sessions,
    audit,
  });
  const impersonation = new ImpersonationService({ credentials: repos.credentials, authorizer, sessions, audit });
  const signIn = new SignInService({
    credentials: repos.credentials,
    realms,
    verifier,
    sessions,
    audit,
    loginCodes,
    pins,
  });
  const backchannelLogout = new BackchannelLogout({
    realms,
    sessions,
    audit,
    usedTokens: new UsedLogoutTokensStore({ redis, keys }),
    credentials: repos.credentials,
    maxAgeSeconds: config.auth.idpLogoutTokenMaxAgeSeconds,
  });
  const account = new AccountService({
    credentials: repos.credentials,
    authorizer,
    realms,
    rules,
    sessions,
    audit,
    pins,
    revocations,
  });
  return {
    vault,
    signingKeys,
    idpSecrets,
    tokens,
    realms,
    authorizer,
    revocations,
    realm,
    verifier,
    audit,
    rules,
    sessions,
    realmAccounts: new RealmAccounts({ credentials: repos.credentials }),
    /** The embedded realms' storage (oidc-provider's adapter), per tenant, for the realm providers. */
    realmStorage: (tenant: string) => realmRecords.adapterFactory(tenant),
    loginCodes,
    pins,
    offlineTokens,
    impersonation,
    signIn,
    account,
    accountSetup,
    backchannelLogout,
    /**
     * Opens every stored signing key at start (the internal ones, and the embedded realms' when this node
     * serves them), so a wrong key-encryption key stops the node instead of failing sign-ins later.
     */
    checkStoredKeys: async (): Promise<void> => {
      await signingKeys.check();
      if (o.mode === 'embedded') await idpSecrets.open();
    },
    /** Verifies a bearer token presented on `tenant`'s host (REST, GraphQL, hub handshake). */
    verifyAccessToken: (tenant: string, token: string): Promise<Principal> => verifier.verify(tenant, token),
  };
}
