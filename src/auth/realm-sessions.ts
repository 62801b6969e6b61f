import type { RealmRecordsStore } from '../data/stores/realm-records.store.js';

/** Session, grant and refresh-token lifetime of the embedded realm. */
export const EMBEDDED_REALM_SESSION_SECONDS = 8 * 3600;

/** Ends realm (identity-provider) sessions behind a sign-out; each call returns the `sid`s that ended. */
export interface RealmSessionStore {
  /** Ends the realm session whose tokens carry `sid` (its cookie stops signing in, its grants end). */
  endBySid(tenant: string, sid: string): Promise<string[]>;
  /** Ends every realm session of the account with this subject. */
  endAccount(tenant: string, subject: string): Promise<string[]>;
}

/**
 * The embedded provider's sessions, ended directly in its storage (src/data/stores/realm-records.store.ts),
 * so any node can sign a user out of the realm whether or not it serves the realm itself. Deleting the
 * session record makes the realm's session cookie worthless (the next authorization asks for the
 * password again); deleting the grant and its tokens ends the refresh tokens minted under it.
 */
export class EmbeddedRealmSessions implements RealmSessionStore {
  constructor(private readonly deps: { records: RealmRecordsStore }) {}

  async endBySid(tenant: string, sid: string): Promise<string[]> {
    const id = await this.deps.records.sessionIdBySid(tenant, sid);
    return id ? this.endSession(tenant, id) : [];
  }

  async endAccount(tenant: string, subject: string): Promise<string[]> {
    const ids = await this.deps.records.sessionIdsOfAccount(tenant, subject);
    const sids: string[] = [];
    for (const id of ids) sids.push(...(await this.endSession(tenant, id)));
    return sids;
  }

  /** Ends one session; its `sid`s (the uid and each client's) are what the service's markers refuse. */
  private async endSession(tenant: string, id: string): Promise<string[]> {
    const session = await this.deps.records.session(tenant, id);
    if (!session) return [];
    const sids: string[] = session.uid ? [session.uid] : [];
    for (const a of Object.values(session.authorizations ?? {})) if (a.sid) sids.push(a.sid);
    await this.deps.records.deleteSession(tenant, id, session);
    return sids;
  }
}
