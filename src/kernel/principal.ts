import type { Permission } from './permissions.js';

/** Who is calling, as established by a token scheme; the same shape for REST, GraphQL and the hub. */
export interface Principal {
  tenant: string;
  userId: string;
  username: string;
  role: string;
  permissions: ReadonlySet<Permission>;
  /** Server-side session the token belongs to; revoking it ends the principal's access. */
  sessionId?: string;
  scheme: 'internal' | 'idp';
  /** Set when a support user acts for `userId` (impersonation). */
  actorUserId?: string;
  /** Set on offline-token sessions: the stated purpose. */
  purpose?: string;
  /** Realm session (`sid` claim) an identity-provider token belongs to, when the provider names one. */
  idpSid?: string;
  /** When the presented token expires (epoch ms): live hub sockets end or must refresh by then. */
  expiresAt?: number;
  /** The token's `iat` (epoch seconds): a live socket only accepts a newer token as its refresh. */
  issuedAt?: number;
  /**
   * The account's display name and kind as its token states them (at issue time): a meeting join names
   * its participant from them without reading the user (decision 1153). Absent (a token issued before
   * they were carried): whoever needs them reads the user.
   */
  displayName?: string;
  kind?: 'person' | 'device';
}
