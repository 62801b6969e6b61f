import { z } from 'zod';
import type { Principal } from './principal.js';
import { isPermission } from './permissions.js';

/** Who a turn acts for: taken from the socket's verified principal, never from the payload. */
export const Caller = z.object({
  userId: z.string(),
  username: z.string(),
  role: z.string(),
  permissions: z.array(z.string()),
  scheme: z.enum(['internal', 'idp']).optional(),
  sessionId: z.string().optional(),
  /** The impersonator, while impersonating: the audit trail names both (docs/audit.md). */
  actorUserId: z.string().optional(),
  /** The account's display name and kind as the caller's token states them (Principal). */
  displayName: z.string().optional(),
  kind: z.enum(['person', 'device']).optional(),
});
export type Caller = z.infer<typeof Caller>;

/** One caller per principal object: a principal is replaced, never changed, when its session changes. */
const callers = new WeakMap<Principal, Caller>();

/**
 * The caller an actor turn acts for, from a verified principal (a socket's from its handshake, or one
 * REST or GraphQL verified): actor messages carry this shape, never what a payload says. Made once per
 * principal and frozen (a hub connection's calls share it; B1 counted the copy of its permissions per
 * call), so nothing a turn does to a message can change the next call's caller.
 */
export function callerOfPrincipal(p: Principal): Caller {
  let c = callers.get(p);
  if (c) return c;
  c = Object.freeze({
    userId: p.userId,
    username: p.username,
    role: p.role,
    permissions: Object.freeze([...p.permissions]) as string[],
    scheme: p.scheme,
    ...(p.sessionId ? { sessionId: p.sessionId } : {}),
    ...(p.actorUserId ? { actorUserId: p.actorUserId } : {}),
    ...(p.displayName !== undefined && p.kind ? { displayName: p.displayName, kind: p.kind } : {}),
  });
  callers.set(p, c);
  return c;
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
    ...(c.displayName !== undefined && c.kind ? { displayName: c.displayName, kind: c.kind } : {}),
  };
}
