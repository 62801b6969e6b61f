import { z } from 'zod';
import type { Principal } from './principal.js';
import { isPermission, PERMISSIONS } from './permissions.js';

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

/**
 * The permission catalogue's identity: its names in order, hashed (FNV-1a, 32 bits). Two nodes with the
 * same catalogue read a permission mask the same way; a node of another release may name another list.
 */
export const PERMISSION_CATALOGUE: string = catalogueId(PERMISSIONS);

export function catalogueId(names: readonly string[]): string {
  let h = 0x811c9dc5;
  for (const ch of names.join('\n')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * A caller as it crosses to another node (decision 1156): its permissions as a mask over the catalogue
 * (`pm`: catalogue id, '.', hexadecimal digits, lowest permission in the last digit), and `permissions`
 * empty, so a node that cannot read the mask (an earlier release) grants nothing rather than failing.
 * A clinician's 19 names are about 300 bytes of the 800 of an actor request; the mask is 18.
 */
export interface WireCaller extends Omit<Caller, 'permissions'> {
  permissions: string[];
  pm?: string;
}

const wireCallers = new WeakMap<Caller, WireCaller>();
const permissionIndex = new Map<string, number>(PERMISSIONS.map((p, i) => [p, i]));

/** The caller's wire form with the mask, or the caller itself when a permission is not in the catalogue. */
export function compactCaller(c: Caller): WireCaller {
  const known = wireCallers.get(c);
  if (known) return known;
  const bits = new Array<number>(Math.ceil(PERMISSIONS.length / 4)).fill(0);
  let wire: WireCaller | undefined;
  for (const p of c.permissions) {
    const i = permissionIndex.get(p);
    if (i === undefined) {
      wire = c;
      break;
    }
    bits[i >> 2]! |= 1 << (i & 3);
  }
  wire ??= {
    ...c,
    permissions: [],
    pm: `${PERMISSION_CATALOGUE}.${bits
      .reverse()
      .map((b) => b.toString(16))
      .join('')}`,
  };
  if (Object.isFrozen(c)) wireCallers.set(c, wire);
  return wire;
}

const expanded = new Map<string, readonly string[]>();
/** Distinct masks kept decoded (a tenant has a handful of roles; more only costs a decode). */
const EXPANDED_MAX = 256;

/**
 * The caller a wire form stands for: the mask's permissions when `pm` names this node's catalogue;
 * `undefined` when it names another (the sender is told, and sends the names instead). A wire caller
 * without a mask is returned as it came.
 */
export function expandCaller<W extends { pm?: unknown; permissions?: unknown }>(
  w: W,
): (Omit<W, 'pm'> & { permissions: readonly string[] }) | undefined {
  if (typeof w.pm !== 'string') return w as Omit<W, 'pm'> & { permissions: readonly string[] };
  const dot = w.pm.indexOf('.');
  if (dot < 0 || w.pm.slice(0, dot) !== PERMISSION_CATALOGUE) return undefined;
  const mask = w.pm.slice(dot + 1);
  let permissions = expanded.get(mask);
  if (!permissions) {
    if (!/^[0-9a-f]{1,64}$/.test(mask)) return undefined;
    const names: string[] = [];
    for (let d = 0; d < mask.length; d++) {
      const nibble = parseInt(mask[mask.length - 1 - d]!, 16);
      for (let b = 0; b < 4; b++) {
        if (!(nibble & (1 << b))) continue;
        const name = PERMISSIONS[d * 4 + b];
        if (name === undefined) return undefined;
        names.push(name);
      }
    }
    permissions = Object.freeze(names);
    if (expanded.size < EXPANDED_MAX) expanded.set(mask, permissions);
  }
  const { pm: _pm, ...rest } = w;
  return { ...rest, permissions };
}
