import type { Principal } from '../auth/principal.js';
import { isPermission } from '../auth/permissions.js';
import type { Caller } from './common.schema.js';

/**
 * The caller an actor turn acts for, from a verified principal (a socket's from its handshake, or one
 * REST or GraphQL verified): actor messages carry this shape, never what a payload says.
 */
export function callerOfPrincipal(p: Principal): Caller {
  return {
    userId: p.userId,
    username: p.username,
    role: p.role,
    permissions: [...p.permissions],
    scheme: p.scheme,
    ...(p.sessionId ? { sessionId: p.sessionId } : {}),
    ...(p.actorUserId ? { actorUserId: p.actorUserId } : {}),
  };
}

/** The principal a turn acts for, rebuilt from the caller its message carries. */
export function principalOf(tenant: string, c: Caller): Principal {
  return {
    tenant,
    userId: c.userId,
    username: c.username,
    role: c.role,
    permissions: new Set(c.permissions.filter(isPermission)),
    scheme: c.scheme ?? 'internal',
    ...(c.sessionId ? { sessionId: c.sessionId } : {}),
    ...(c.actorUserId ? { actorUserId: c.actorUserId } : {}),
  };
}
