import type { Adapter } from 'oidc-provider';
import type { KeyVault } from '../auth/key-vault.js';
import type { SigningKeys } from '../auth/signing-keys.js';
import type { IdpSecretsService } from '../auth/idp-secrets.js';
import type { InternalTokens } from '../auth/internal-tokens.js';
import type { OidcRealms } from '../auth/oidc-realms.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { Revocations } from '../auth/revocations.js';
import type { RealmLogout } from '../auth/realm-logout.js';
import type { AccessTokenVerifier } from '../auth/access-token-verifier.js';
import type { RealmAccounts } from '../auth/realm-accounts.js';
import type { AuditService } from '../core/audit/audit.service.js';
import type { SecurityRulesService } from '../core/identity/security-rules.service.js';
import type { SessionService } from '../core/identity/session.service.js';
import type { LoginCodeService } from '../core/identity/login-code.service.js';
import type { PinService } from '../core/identity/pin.service.js';
import type { OfflineTokenService } from '../core/identity/offline-token.service.js';
import type { ImpersonationService } from '../core/identity/impersonation.service.js';
import type { SignInService } from '../core/identity/sign-in.service.js';
import type { AccountService } from '../core/identity/account.service.js';
import type { AccountSetupService } from '../core/identity/account-setup.service.js';
import type { BackchannelLogout } from '../core/identity/backchannel-logout.js';
import type { Principal } from '../kernel/principal.js';

/**
 * Identity and sessions (built by src/composition/auth.wiring.ts): keys, tokens, realms, the authorizer,
 * the audit trail, sessions and every sign-in method.
 */
export interface AuthServices {
  /** Seals secrets at rest with the key-encryption key. */
  vault: KeyVault;
  signingKeys: SigningKeys;
  idpSecrets: IdpSecretsService;
  tokens: InternalTokens;
  realms: OidcRealms;
  authorizer: Authorizer;
  revocations: Revocations;
  realm: RealmLogout;
  verifier: AccessTokenVerifier;
  audit: AuditService;
  rules: SecurityRulesService;
  sessions: SessionService;
  realmAccounts: RealmAccounts;
  /** The embedded realms' storage (oidc-provider's adapter), per tenant, for the realm providers. */
  realmStorage(tenant: string): (model: string) => Adapter;
  loginCodes: LoginCodeService;
  pins: PinService;
  offlineTokens: OfflineTokenService;
  impersonation: ImpersonationService;
  signIn: SignInService;
  account: AccountService;
  accountSetup: AccountSetupService;
  backchannelLogout: BackchannelLogout;
  /**
   * Opens every stored signing key at start (the internal ones, and the embedded realms' when this node
   * serves them), so a wrong key-encryption key stops the node instead of failing sign-ins later.
   */
  checkStoredKeys(): Promise<void>;
  /** Verifies a bearer token presented on `tenant`'s host (REST, GraphQL, hub handshake). */
  verifyAccessToken(tenant: string, token: string): Promise<Principal>;
}
