import { AppError, toAppError, type ErrorCode } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { Permission } from '../kernel/permissions.js';
import type { RevocationEvent } from '../auth/revocations.js';
import type { Logger } from '../observability/logger.js';
import { rooms } from '../realtime/rooms.js';
import type { HubServer, HubSocket } from './hub.events.js';

export interface SocketSessionsDeps {
  verifyAccessToken(tenant: string, token: string): Promise<Principal>;
  permissionsOf(tenant: string, role: string): Promise<ReadonlySet<Permission>>;
  logger: Logger;
}

/** setTimeout's ceiling (about 24.8 days); a later expiry is re-armed when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Keeps each socket's principal as current as a fresh token would be, without a database or Redis read
 * per call: the socket ends at its token's expiry unless the client refreshed it (`refreshToken`);
 * revocations and role changes arrive over Redis Pub/Sub on every hub node and apply at once.
 */
export class SocketSessions {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** When a socket's permissions were last cut by a role change: older tokens cannot restore them. */
  private readonly changedAt = new Map<string, number>();

  /** One disconnect listener for every socket (`this` is the socket), not a closure per socket. */
  private readonly detach: (this: HubSocket) => void;

  constructor(
    private readonly io: HubServer,
    private readonly deps: SocketSessionsDeps,
  ) {
    const { timers, changedAt } = this;
    this.detach = function (this: HubSocket) {
      clearTimeout(timers.get(this.id));
      timers.delete(this.id);
      changedAt.delete(this.id);
    };
  }

  /**
   * A new socket: its expiry, and the room of its realm session. An internal session has no room: its
   * revocation finds the session's sockets among the user's (decision 1185).
   */
  attach(socket: HubSocket): void {
    const { tenant, principal } = socket.data;
    if (principal.idpSid) void socket.join(rooms.realmSession(tenant, principal.idpSid));
    this.arm(socket);
    socket.on('disconnect', this.detach);
  }

  /** Refused per call once the token has expired (the expiry timer then ends the socket). */
  assertLive(socket: HubSocket): void {
    const at = socket.data.principal.expiresAt;
    if (at !== undefined && Date.now() >= at)
      throw new AppError(
        'token_expired',
        'The access token of this connection has expired; call refreshToken before expiry or reconnect',
      );
  }

  /** Tells the client why, then drops the socket (`sessionEnded` carries an error code). */
  end(socket: HubSocket, code: ErrorCode, message: string): void {
    socket.emit('sessionEnded', { code, message });
    socket.disconnect(true);
  }

  /**
   * `refreshToken`: a newer token of the same user (and impersonator) replaces the socket's principal;
   * its permissions, rooms and expiry follow. A refused token leaves the socket as it was.
   */
  async refresh(
    socket: HubSocket,
    raw: string,
  ): Promise<{ expiresAt?: string; role: string; permissions: Permission[] }> {
    const cur = socket.data.principal;
    const next = await this.deps.verifyAccessToken(socket.data.tenant, raw.replace(/^Bearer\s+/i, '').trim());
    if (next.userId !== cur.userId || next.actorUserId !== cur.actorUserId)
      throw new AppError('forbidden', 'The token belongs to another user than this connection');
    const changed = this.changedAt.get(socket.id);
    const stale =
      (next.issuedAt ?? 0) < Math.max(cur.issuedAt ?? 0, Math.floor((changed ?? 0) / 1000)) ||
      (changed !== undefined && next.role !== cur.role);
    if (stale)
      throw new AppError(
        'token_invalid',
        'The token is older than the credentials of this connection (refresh it after a role change)',
      );
    const { tenant } = socket.data;
    if (cur.idpSid !== next.idpSid) {
      if (cur.idpSid) await socket.leave(rooms.realmSession(tenant, cur.idpSid));
      if (next.idpSid) await socket.join(rooms.realmSession(tenant, next.idpSid));
    }
    socket.data.principal = next;
    this.arm(socket);
    return {
      ...(next.expiresAt ? { expiresAt: new Date(next.expiresAt).toISOString() } : {}),
      role: next.role,
      permissions: [...next.permissions].sort(),
    };
  }

  /** A revocation or role change announced by any node (keys.revocationChannel). */
  async apply(m: RevocationEvent): Promise<void> {
    try {
      if (m.type === 'role') return await this.changeRole(m.tenant, m.userId, m.role);
      const ended =
        m.type === 'session' && m.sessionId
          ? this.local(rooms.user(m.tenant, m.userId)).filter((s) => s.data.principal.sessionId === m.sessionId)
          : m.type === 'realm-session' && m.idpSid
            ? this.local(rooms.realmSession(m.tenant, m.idpSid))
            : m.type === 'user'
              ? this.local(rooms.user(m.tenant, m.userId))
              : [];
      for (const s of ended) this.end(s, 'session_revoked', 'The session of this connection has been signed out');
    } catch (err) {
      this.deps.logger.error(
        { component: 'hub', err: toAppError(err).message },
        'applying a revocation to live sockets failed',
      );
    }
  }

  /**
   * The user's sockets take the new role's permissions at once (capped sessions, impersonation and
   * offline, only lose permissions here; they gain them at their next refresh). Sockets where the user
   * is the impersonator lose what the new role no longer grants.
   */
  private async changeRole(tenant: string, userId: string, role: string | undefined): Promise<void> {
    if (!role) return;
    const granted = await this.deps.permissionsOf(tenant, role);
    for (const s of this.local(rooms.tenant(tenant))) {
      const p = s.data.principal;
      if (p.userId !== userId && p.actorUserId !== userId) continue;
      const capped = p.userId !== userId || p.actorUserId !== undefined || p.purpose !== undefined;
      const permissions = capped ? new Set([...p.permissions].filter((x) => granted.has(x))) : new Set(granted);
      s.data.principal = { ...p, ...(p.userId === userId ? { role } : {}), permissions };
      this.changedAt.set(s.id, Date.now());
      s.emit('permissionsChanged', { role: s.data.principal.role, permissions: [...permissions].sort() });
    }
  }

  private arm(socket: HubSocket): void {
    clearTimeout(this.timers.get(socket.id));
    const at = socket.data.principal.expiresAt;
    if (at === undefined) return;
    const wait = at - Date.now();
    // The socket and its expiry ride as the timer's arguments: no closure (and its scope) per socket.
    const timer = setTimeout(this.expire, Math.max(0, Math.min(wait, MAX_TIMER_MS)), socket, at);
    timer.unref();
    this.timers.set(socket.id, timer);
  }

  private readonly expire = (socket: HubSocket, at: number): void => {
    if (socket.data.principal.expiresAt !== at) return;
    if (Date.now() < at) return this.arm(socket);
    this.end(socket, 'token_expired', 'The access token of this connection has expired; reconnect with a fresh token');
  };

  /** This node's sockets in a room (each hub node receives every announcement and ends its own). */
  private local(room: string): HubSocket[] {
    const ids = this.io.of('/').adapter.rooms.get(room);
    if (!ids) return [];
    return [...ids].map((id) => this.io.sockets.sockets.get(id)).filter((s): s is HubSocket => s !== undefined);
  }
}
