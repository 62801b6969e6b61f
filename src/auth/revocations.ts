import type { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * Payload published on `keys.revocationChannel` when a session is revoked (logout, refresh-token reuse,
 * offline-token revocation, impersonation end). The hub disconnects the session's sockets.
 */
export const RevocationMessage = z.object({ tenant: z.string(), sessionId: z.string(), userId: z.string() });
export type RevocationMessage = z.infer<typeof RevocationMessage>;

export interface RevocationsDeps {
  redis: Redis;
  channel: string;
  /** Redis key of the "revoked" marker of a session (keys.revokedSession). */
  markerKey(tenant: string, sessionId: string): string;
  /** Marker lifetime: at least the longest access-token lifetime, so no token of the session outlives it. */
  markerTtlSeconds: number;
}

/** Revocation markers every node checks on each token, plus the pub/sub announcement for live sockets. */
export class Revocations {
  constructor(private readonly deps: RevocationsDeps) {}

  async revoke(msg: RevocationMessage): Promise<void> {
    await this.deps.redis.set(this.deps.markerKey(msg.tenant, msg.sessionId), '1', 'EX', this.deps.markerTtlSeconds);
    await this.deps.redis.publish(this.deps.channel, JSON.stringify(msg));
  }

  async isRevoked(tenant: string, sessionId: string): Promise<boolean> {
    return (await this.deps.redis.exists(this.deps.markerKey(tenant, sessionId))) === 1;
  }
}

/**
 * Subscribes to revocations on a dedicated connection (a subscribed ioredis connection cannot run other
 * commands). `redis` is duplicated, not consumed; call the returned function to unsubscribe and close.
 */
export async function subscribeRevocations(redis: Redis, channel: string, onRevoked: (m: RevocationMessage) => void): Promise<() => Promise<void>> {
  const sub = redis.duplicate();
  sub.on('message', (ch: string, text: string) => {
    if (ch !== channel) return;
    try {
      const parsed = RevocationMessage.safeParse(JSON.parse(text));
      if (parsed.success) onRevoked(parsed.data);
    } catch {
      /* a malformed message is ignored: publishers are our own nodes */
    }
  });
  await sub.subscribe(channel);
  return async () => {
    await sub.unsubscribe(channel).catch(() => undefined);
    await sub.quit().catch(() => undefined);
  };
}
