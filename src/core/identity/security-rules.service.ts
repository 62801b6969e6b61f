import { type CredentialRepository, type SecurityRules } from '../../data/repositories/credential.repository.js';
import { defaultSettings } from '../../data/tenant-defaults.js';

/**
 * The tenant's security rules (PIN policy, lockout, session lifetimes, login-code TTL) from its Settings
 * document, falling back to the defaults for a tenant migrated before a rule existed.
 */
export class SecurityRulesService {
  private readonly cache = new Map<string, { at: number; rules: SecurityRules }>();

  constructor(
    private readonly deps: {
      /** The tenant's credential repository (a factory of the composition root). */
      credentials(tenant: string): CredentialRepository;
      cacheMs?: number;
    },
  ) {}

  /** Drops this node's cached rules of `tenant` (after a change; other nodes follow within the cache time). */
  forget(tenant: string): void {
    this.cache.delete(tenant);
  }

  async get(tenant: string): Promise<SecurityRules> {
    const hit = this.cache.get(tenant);
    if (hit && Date.now() - hit.at < (this.deps.cacheMs ?? 5000)) return hit.rules;
    const stored = await this.deps.credentials(tenant).securityRules();
    const d = defaultSettings(tenant).security;
    const rules: SecurityRules = {
      pin: { ...d.pin, ...stored?.pin },
      lockout: { ...d.lockout, ...stored?.lockout },
      session: { ...d.session, ...stored?.session },
      loginCodeTtlSeconds: stored?.loginCodeTtlSeconds ?? d.loginCodeTtlSeconds,
    };
    this.cache.set(tenant, { at: Date.now(), rules });
    return rules;
  }
}
