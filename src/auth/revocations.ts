import { z } from 'zod';
import type { RevocationsStore } from '../data/stores/revocations.store.js';
import { AppError } from '../kernel/errors.js';

/**
 * Payload published on `keys.revocationChannel`. `type` says what ended or changed (absent on messages
 * of older nodes, which only announced internal sessions):
 * - `session`: an internal session was revoked (logout, refresh-token reuse, offline token revoked...);
 * - `realm-session`: a realm session (`idpSid`, the `sid` claim of its tokens) ended;
 * - `user`: every session of the user ended (an admin's sign-out of that user);
 * - `role`: the user's role changed to `role`: live sockets re-derive their permissions at once.
 */
export const RevocationMessage = z.object({
  type: z.enum(['session', 'realm-session', 'user', 'role']).default('session'),
  tenant: z.string(),
  userId: z.string(),
  sessionId: z.string().optional(),
  idpSid: z.string().optional(),
  role: z.string().optional(),
});
export type RevocationMessage = z.input<typeof RevocationMessage>;
export type RevocationEvent = z.output<typeof RevocationMessage>;

export interface RevocationsDeps {
  /** The markers and the revocation channel (src/data/stores/revocations.store.ts). */
  store: RevocationsStore;
  /** Marker lifetime: at least the longest access-token lifetime, so no token of the session outlives it. */
  markerTtlSeconds: number;
  /** Lifetime of realm markers: at least the longest identity-provider token lifetime accepted. */
  idpMarkerTtlSeconds: number;
}

/** What a token names that revocation can apply to. */
export interface RevocationSubject {
  tenant: string;
  /** Internal session id (internal tokens). */
  sessionId?: string;
  /** Realm session id, the `sid` claim (identity-provider tokens). */
  idpSid?: string;
  /** Identity-provider tokens: the user and the token's `iat`, checked against the user's not-before. */
  userId?: string;
  issuedAt?: number;
}

/**
 * The revocation state every node checks on each token (one MGET), plus the pub/sub announcement that
 * reaches live sockets on every hub node. Internal and identity-provider tokens share it.
 */
export class Revocations {
  constructor(private readonly deps: RevocationsDeps) {}

  async revoke(msg: { tenant: string; sessionId: string; userId: string }): Promise<void> {
    await this.deps.store.markSession(msg.tenant, msg.sessionId, this.deps.markerTtlSeconds);
    await this.publish({ type: 'session', ...msg });
  }

  /** Ends a realm session for this service: every token carrying `sid` is refused from now on. */
  async revokeRealmSession(tenant: string, userId: string, sid: string): Promise<void> {
    await this.deps.store.markRealmSession(tenant, sid, this.deps.idpMarkerTtlSeconds);
    await this.publish({ type: 'realm-session', tenant, userId, idpSid: sid });
  }

  /**
   * Refuses every identity-provider token of the user issued up to now (tokens of the current second
   * included: `iat` has whole-second precision, so the boundary errs on the side of refusing).
   */
  async revokeUserTokens(tenant: string, userId: string): Promise<void> {
    const notBefore = Math.floor(Date.now() / 1000) + 1;
    await this.deps.store.setUserNotBefore(tenant, userId, notBefore, this.deps.idpMarkerTtlSeconds);
    await this.publish({ type: 'user', tenant, userId });
  }

  /** Announces a role change so open sockets of the user re-derive their permissions. */
  announceRole(tenant: string, userId: string, role: string): Promise<void> {
    return this.publish({ type: 'role', tenant, userId, role });
  }

  /** Throws `session_revoked` when any revocation applies to the token's session, realm session or user. */
  async check(s: RevocationSubject): Promise<void> {
    const m = await this.deps.store.markers(s.tenant, {
      sessionId: s.sessionId,
      idpSid: s.idpSid,
      notBeforeOf: s.issuedAt !== undefined ? s.userId : undefined,
    });
    const revoked = m.session || m.realmSession || (m.notBefore !== null && s.issuedAt! < m.notBefore);
    if (revoked) throw new AppError('session_revoked', 'The session of this token has been revoked');
  }

  async isRevoked(tenant: string, sessionId: string): Promise<boolean> {
    return this.deps.store.isSessionMarked(tenant, sessionId);
  }

  /**
   * Subscribes to the revocations of every node; call the returned function to unsubscribe. A message
   * that is not a revocation is ignored; an error of `onRevoked` goes to `onError`.
   */
  subscribe(
    onRevoked: (m: RevocationEvent) => void,
    onError: (err: unknown) => void = () => undefined,
  ): Promise<() => Promise<void>> {
    return this.deps.store.subscribe((message) => {
      const parsed = RevocationMessage.safeParse(message);
      if (!parsed.success) return;
      // Thrown inside the subscriber connection's message event it would escape to the process.
      try {
        onRevoked(parsed.data);
      } catch (err) {
        onError(err);
      }
    });
  }

  private async publish(msg: RevocationMessage): Promise<void> {
    await this.deps.store.publish(msg);
  }
}
