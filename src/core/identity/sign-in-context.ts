// What a sign-in starts from (where it came from, who, which method, its parent) and what it returns (the
// session, the user, the permissions): shared by the session service and every sign-in method.
import type { SessionMethod } from '../../data/repositories/session.repository.js';
import type { AccountRecord } from '../../data/repositories/credential.repository.js';
import type { Permission } from '../../kernel/permissions.js';

/** Where a sign-in comes from (for audit records and session metadata). */
export interface SignInContext {
  ip?: string;
  userAgent?: string;
}

/** Session metadata returned by login and refresh (LoginMeta). */
export interface LoginMeta {
  tokenType: 'Bearer';
  accessToken: string;
  expiresIn: number;
  expiresAt: string;
  refreshToken: string;
  refreshExpiresAt: string;
  sessionId: string;
}

export interface SessionUser {
  id: string;
  username: string;
  displayName: string;
  role: string;
  kind: string;
}

/** LoginResponse: the session plus who signed in and what they may do. */
export interface LoginResponse extends LoginMeta {
  user: SessionUser;
  permissions: Permission[];
  impersonatedBy?: string;
  purpose?: string;
}

export interface StartSession {
  tenant: string;
  user: AccountRecord;
  method: SessionMethod;
  actor?: AccountRecord;
  purpose?: string;
  offlineTokenId?: string;
  /**
   * The session minting this one (QR approval, impersonation) and what it holds: the new session is
   * capped by `permissions`, ends no later than the parent, inherits its offline lineage and is revoked
   * with it. Approved with an identity-provider token, the parent is its realm session (`realmSid`):
   * the new session is revoked when that realm session ends.
   */
  parent?: { sessionId?: string; realmSid?: string; permissions: readonly string[] };
  /** Realm session the sign-in came from (authorization code): signing out ends it too. */
  idpSid?: string;
  ip?: string;
  userAgent?: string;
}

export function presentUser(u: AccountRecord): SessionUser {
  return { id: u._id.toString(), username: u.username, displayName: u.displayName, role: u.role, kind: u.kind };
}
