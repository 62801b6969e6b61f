import type { TenantDb } from '../data/mongo.js';
import { CredentialRepository, type AccountRecord } from '../data/repositories/credential.repository.js';

/**
 * The accounts of the embedded realms: what the realm's pages and provider read of a tenant's users
 * (by the subject its tokens carry, by the username of its sign-in form) and the demo passwords.
 */
export class RealmAccounts {
  constructor(private readonly deps: { tenantDb(tenant: string): TenantDb }) {}

  bySubject(tenant: string, subject: string): Promise<AccountRecord | null> {
    return this.credentials(tenant).findBySubject(subject);
  }

  byUsername(tenant: string, username: string): Promise<AccountRecord | null> {
    return this.credentials(tenant).findByUsername(username);
  }

  /** Gives each listed user without a password this one (already hashed); the demo tenant's users. */
  async seedPasswords(
    tenant: string,
    usernames: readonly string[],
    passwordHash: () => Promise<string>,
  ): Promise<void> {
    const creds = this.credentials(tenant);
    for (const username of usernames) {
      const user = await creds.findByUsername(username);
      if (user && !user.passwordHash) await creds.setPasswordHash(user._id.toString(), await passwordHash());
    }
  }

  private credentials(tenant: string): CredentialRepository {
    return new CredentialRepository(this.deps.tenantDb(tenant));
  }
}
