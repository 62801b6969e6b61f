import { duplicateRedis, type RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';

/** Which revocation markers apply to a token: its internal session, its realm session, its user's not-before. */
export interface RevocationMarkers {
  session: boolean;
  realmSession: boolean;
  /** Epoch seconds before which the user's identity-provider tokens are refused; null when none is set (or not asked). */
  notBefore: number | null;
}

/**
 * Revocation state in Redis: markers of revoked internal and realm sessions and a user's not-before
 * time, each expiring on its own, and the pub/sub channel that announces revocations to every node.
 * The rules (what is revoked, for how long, what a marker means for a token) are src/auth/revocations.ts's.
 */
export class RevocationsStore {
  constructor(
    private readonly deps: {
      redis: RedisClient;
      keys: Pick<RedisKeys, 'revokedSession' | 'revokedRealmSession' | 'userNotBefore' | 'revocationChannel'>;
    },
  ) {}

  async markSession(tenant: string, sessionId: string, ttlSeconds: number): Promise<void> {
    await this.deps.redis.set(this.deps.keys.revokedSession(tenant, sessionId), '1', 'EX', ttlSeconds);
  }

  async markRealmSession(tenant: string, sid: string, ttlSeconds: number): Promise<void> {
    await this.deps.redis.set(this.deps.keys.revokedRealmSession(tenant, sid), '1', 'EX', ttlSeconds);
  }

  async setUserNotBefore(tenant: string, userId: string, epochSeconds: number, ttlSeconds: number): Promise<void> {
    await this.deps.redis.set(this.deps.keys.userNotBefore(tenant, userId), String(epochSeconds), 'EX', ttlSeconds);
  }

  /** The markers of one token in one MGET (none when nothing is asked): every request checks them. */
  async markers(
    tenant: string,
    of: { sessionId?: string; idpSid?: string; notBeforeOf?: string },
  ): Promise<RevocationMarkers> {
    const keys: string[] = [];
    const at = (key: string | undefined) => (key ? keys.push(key) - 1 : -1);
    const session = at(of.sessionId && this.deps.keys.revokedSession(tenant, of.sessionId));
    const realmSession = at(of.idpSid && this.deps.keys.revokedRealmSession(tenant, of.idpSid));
    const notBefore = at(of.notBeforeOf && this.deps.keys.userNotBefore(tenant, of.notBeforeOf));
    const values = keys.length ? await this.deps.redis.mget(...keys) : [];
    const value = (i: number) => (i < 0 ? null : (values[i] ?? null));
    const nb = value(notBefore);
    return {
      session: value(session) !== null,
      realmSession: value(realmSession) !== null,
      notBefore: nb === null ? null : Number(nb),
    };
  }

  async isSessionMarked(tenant: string, sessionId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.keys.revokedSession(tenant, sessionId))) === 1;
  }

  /** Announces a revocation to every node (JSON on the revocation channel). */
  async publish(message: object): Promise<void> {
    await this.deps.redis.publish(this.deps.keys.revocationChannel, JSON.stringify(message));
  }

  /**
   * Subscribes to the revocation channel on a dedicated connection (a subscribed ioredis connection
   * cannot run other commands); `onMessage` gets each message's parsed JSON (a malformed message is
   * ignored: publishers are our own nodes) and must not throw. Call the returned function to unsubscribe
   * and close the connection.
   */
  async subscribe(onMessage: (message: unknown) => void): Promise<() => Promise<void>> {
    const channel = this.deps.keys.revocationChannel;
    const sub = duplicateRedis(this.deps.redis, { subscriber: true });
    sub.on('message', (ch: string, text: string) => {
      if (ch !== channel) return;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return;
      }
      onMessage(message);
    });
    await sub.subscribe(channel);
    return async () => {
      await sub.unsubscribe(channel).catch(() => undefined);
      await sub.quit().catch(() => undefined);
    };
  }
}
