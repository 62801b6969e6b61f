import type { Revocations } from './revocations.js';
import type { RealmSessionStore } from './realm-sessions.js';

export interface RealmLogoutDeps {
  revocations: Revocations;
  /** The embedded realm's storage; absent for an external identity provider, which the service cannot reach into. */
  store?: RealmSessionStore;
}

/**
 * Carries a sign-out into the realm: the realm session (and, for the embedded realm, its cookie, grant
 * and refresh tokens) ends, and its identity-provider tokens are refused by every node from then on.
 */
export class RealmLogout {
  constructor(private readonly deps: RealmLogoutDeps) {}

  /** Ends the realm session whose tokens carry `sid`. */
  async endSession(tenant: string, userId: string, sid: string): Promise<void> {
    const ended = this.deps.store ? await this.deps.store.endBySid(tenant, sid) : [];
    for (const s of new Set([sid, ...ended])) await this.deps.revocations.revokeRealmSession(tenant, userId, s);
  }

  /**
   * Ends every realm session of the user: embedded sessions are ended by account; for any provider,
   * the user's identity-provider tokens issued until now are refused (not-before).
   */
  async endUser(tenant: string, userId: string, subject: string): Promise<void> {
    const ended = this.deps.store ? await this.deps.store.endAccount(tenant, subject) : [];
    for (const s of new Set(ended)) await this.deps.revocations.revokeRealmSession(tenant, userId, s);
    await this.deps.revocations.revokeUserTokens(tenant, userId);
  }
}
