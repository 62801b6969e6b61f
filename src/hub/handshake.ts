import type { IncomingMessage } from 'node:http';
import type { ExtendedError, Socket } from 'socket.io';
import { AppError, toAppError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { tenantFromHost } from '../edge/tenant-host.js';
import type { Logger } from '../observability/logger.js';

export interface HandshakeDeps {
  baseDomain: string;
  resolveTenant(name: string): Promise<{ name: string } | null>;
  verifyAccessToken(tenant: string, token: string): Promise<Principal>;
  logger: Logger;
  /** Counts the handshake against the client address's limit (RATE_LIMIT_PER_IP); throws `rate_limited`. */
  admit?(req: IncomingMessage): Promise<void>;
}

/** The access token of a handshake: `auth.token` (current clients) or `?access_token=` (existing mobile clients). */
export function handshakeToken(h: Socket['handshake']): string | undefined {
  const auth = h.auth as { token?: unknown } | undefined;
  const fromAuth = typeof auth?.token === 'string' ? auth.token : undefined;
  const q = h.query.access_token;
  const fromQuery = typeof q === 'string' ? q : undefined;
  const raw = fromAuth ?? fromQuery;
  return raw?.replace(/^Bearer\s+/i, '').trim() || undefined;
}

/** A connect_error the client can branch on: `err.message` is readable, `err.data.code` is the error code. */
function refusal(e: unknown): ExtendedError {
  const app = toAppError(e);
  const err = new Error(app.code === 'internal' ? 'Handshake failed' : app.message) as ExtendedError;
  err.data = { code: app.code, message: err.message, ...(app.retryAfter ? { retryAfter: app.retryAfter } : {}) };
  return err;
}

/**
 * Socket.IO middleware: counts the handshake against the per-IP limit, resolves the tenant from the Host header, verifies the access token for that
 * tenant (a token of another tenant is refused) and stores the principal in `socket.data`.
 */
export function handshake(deps: HandshakeDeps) {
  return async (socket: Socket, next: (err?: ExtendedError) => void): Promise<void> => {
    try {
      await deps.admit?.(socket.request);
      const name = tenantFromHost(socket.handshake.headers.host, deps.baseDomain);
      if (!name) throw new AppError('tenant_not_found', 'Connect on a tenant host ({tenant}.<base domain>)');
      const tenant = await deps.resolveTenant(name);
      if (!tenant) throw new AppError('tenant_not_found', `No tenant '${name}'`);
      const token = handshakeToken(socket.handshake);
      if (!token)
        throw new AppError(
          'unauthenticated',
          'Send the access token as auth.token or the access_token query parameter',
        );
      const principal = await deps.verifyAccessToken(tenant.name, token);
      if (principal.tenant !== tenant.name) throw new AppError('wrong_tenant', 'The token belongs to another tenant');
      socket.data.tenant = tenant.name;
      socket.data.principal = principal;
      next();
    } catch (e) {
      const err = refusal(e);
      if (toAppError(e).code === 'internal') deps.logger.error({ component: 'hub', err: e }, 'handshake failed');
      next(err);
    }
  };
}
