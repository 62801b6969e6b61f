import { BUILTIN_ROLES, type Permission } from '../../../src/kernel/permissions.js';
import type { Principal } from '../../../src/kernel/principal.js';

/** A signed-in caller as a token scheme would establish it, with the permissions of a built-in role. */
export function principalOf(
  tenant: string,
  user: { _id: { toString(): string }; username: string; role: string },
  extra: Partial<Principal> = {},
): Principal {
  return {
    tenant,
    userId: user._id.toString(),
    username: user.username,
    role: user.role,
    permissions: new Set<Permission>(BUILTIN_ROLES[user.role]?.permissions ?? []),
    scheme: 'internal',
    ...extra,
  };
}
