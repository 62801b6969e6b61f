import { duplicateRedis, type RedisClient } from '../data/redis.js';
import { z } from 'zod';
import { AppError } from '../core/errors.js';

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
  redis: RedisClient;
  channel: string;
  /** Redis key of the "revoked" marker of an internal session (keys.revokedSession). */
  markerKey(tenant: string, sessionId: string): string;
  /** Redis key of the "revoked" marker of a realm session (keys.revokedRealmSession). */
  realmMarkerKey(tenant: string, sid: string): string;
  /** Redis key of a user's not-before time for identity-provider tokens (keys.userNotBefore). */
  notBeforeKey(tenant: string, userId: string): string;
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
    await this.deps.redis.set(this.deps.markerKey(msg.tenant, msg.sessionId), '1', 'EX', this.deps.markerTtlSeconds);
    await this.publish({ type: 'session', ...msg });
  }

  /** Ends a realm session for this service: every token carrying `sid` is refused from now on. */
  async revokeRealmSession(tenant: string, userId: string, sid: string): Promise<void> {
    await this.deps.redis.set(this.deps.realmMarkerKey(tenant, sid), '1', 'EX', this.deps.idpMarkerTtlSeconds);
    await this.publish({ type: 'realm-session', tenant, userId, idpSid: sid });
  }

  /**
   * Refuses every identity-provider token of the user issued up to now (tokens of the current second
   * included: `iat` has whole-second precision, so the boundary errs on the side of refusing).
   */
  async revokeUserTokens(tenant: string, userId: string): Promise<void> {
    const notBefore = Math.floor(Date.now() / 1000) + 1;
    await this.deps.redis.set(
      this.deps.notBeforeKey(tenant, userId),
      String(notBefore),
      'EX',
      this.deps.idpMarkerTtlSeconds,
    );
    await this.publish({ type: 'user', tenant, userId });
  }

  /** Announces a role change so open sockets of the user re-derive their permissions. */
  announceRole(tenant: string, userId: string, role: string): Promise<void> {
    return this.publish({ type: 'role', tenant, userId, role });
  }

  /** Throws `session_revoked` when any revocation applies to the token's session, realm session or user. */
  async check(s: RevocationSubject): Promise<void> {
    const keys: string[] = [];
    if (s.sessionId) keys.push(this.deps.markerKey(s.tenant, s.sessionId));
    if (s.idpSid) keys.push(this.deps.realmMarkerKey(s.tenant, s.idpSid));
    const notBeforeAt =
      s.userId && s.issuedAt !== undefined ? keys.push(this.deps.notBeforeKey(s.tenant, s.userId)) - 1 : -1;
    if (!keys.length) return;
    const values = await this.deps.redis.mget(...keys);
    const revoked = values.some((v, i) => (i === notBeforeAt ? v !== null && s.issuedAt! < Number(v) : v !== null));
    if (revoked) throw new AppError('session_revoked', 'The session of this token has been revoked');
  }

  async isRevoked(tenant: string, sessionId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.markerKey(tenant, sessionId))) === 1;
  }

  private async publish(msg: RevocationMessage): Promise<void> {
    await this.deps.redis.publish(this.deps.channel, JSON.stringify(msg));
  }
}

/**
 * Subscribes to revocations on a dedicated connection (a subscribed ioredis connection cannot run other
 * commands). `redis` is duplicated, not consumed; call the returned function to unsubscribe and close.
 */
export async function subscribeRevocations(
  redis: RedisClient,
  channel: string,
  onRevoked: (m: RevocationEvent) => void,
  onError: (err: unknown) => void = () => undefined,
): Promise<() => Promise<void>> {
  const sub = duplicateRedis(redis);
  sub.on('message', (ch: string, text: string) => {
    if (ch !== channel) return;
    let parsed: ReturnType<typeof RevocationMessage.safeParse>;
    try {
      parsed = RevocationMessage.safeParse(JSON.parse(text));
    } catch {
      return; // a malformed message is ignored: publishers are our own nodes
    }
    if (!parsed.success) return;
    // Thrown inside ioredis's message event it would escape to the process.
    try {
      onRevoked(parsed.data);
    } catch (err) {
      onError(err);
    }
  });
  await sub.subscribe(channel);
  return async () => {
    await sub.unsubscribe(channel).catch(() => undefined);
    await sub.quit().catch(() => undefined);
  };
}
