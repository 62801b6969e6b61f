import type { AccountRecord, CredentialRepository } from '../data/repositories/credential.repository.js';

/**
 * The accounts of the embedded realms: what the realm's pages and provider read of a tenant's users
 * (by the subject its tokens carry, by the username of its sign-in form) and the demo passwords.
 */
export class RealmAccounts {
  constructor(
    private readonly deps: {
      /** The tenant's credential repository (a factory of the composition root). */
      credentials(tenant: string): CredentialRepository;
    },
  ) {}

  bySubject(tenant: string, subject: string): Promise<AccountRecord | null> {
    return this.deps.credentials(tenant).findBySubject(subject);
  }

  byUsername(tenant: string, username: string): Promise<AccountRecord | null> {
    return this.deps.credentials(tenant).findByUsername(username);
  }

  /** Gives each listed user without a password this one (already hashed); the demo tenant's users. */
  async seedPasswords(
    tenant: string,
    usernames: readonly string[],
    passwordHash: () => Promise<string>,
  ): Promise<void> {
    const creds = this.deps.credentials(tenant);
    for (const username of usernames) {
      const user = await creds.findByUsername(username);
      if (user && !user.passwordHash) await creds.setPasswordHash(user._id.toString(), await passwordHash());
    }
  }
}
