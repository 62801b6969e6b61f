import type { NodeHandle } from '../../src/composition/node.js';
import { CredentialRepository } from '../../src/data/repositories/credential.repository.js';
import { slowHash } from '../../src/kernel/secrets.js';
import type { LoginResponse } from '../../src/core/identity/sign-in-context.js';

export interface CreateUserOptions {
  username: string;
  role: string;
  displayName?: string;
  /** Password the embedded identity provider accepts for this user (none: cannot sign in there). */
  password?: string;
  kind?: 'person' | 'device';
}

/** Creates the tenant (migrated) when missing, then a user in it; returns the user id. */
export async function createUser(node: NodeHandle, tenant: string, opts: CreateUserOptions): Promise<string> {
  if (!(await node.services.tenants.resolve(tenant))) await node.services.tenants.ensure({ name: tenant });
  const { db } = await node.services.tenants.require(tenant);
  return new CredentialRepository(db).create({
    username: opts.username,
    displayName: opts.displayName ?? opts.username,
    role: opts.role,
    kind: opts.kind,
    ...(opts.password ? { passwordHash: await slowHash(opts.password) } : {}),
  });
}

export interface TokenOptions {
  /** Sign-in method recorded on the session (default 'device' for test sessions). */
  method?: 'oidc' | 'qr' | 'pin' | 'device';
}

/** Signs `username` in through the session service (no HTTP) and returns a valid internal access token. */
export async function tokenFor(
  node: NodeHandle,
  tenant: string,
  username: string,
  opts: TokenOptions = {},
): Promise<string> {
  return (await loginFor(node, tenant, username, opts)).accessToken;
}

/** Same as tokenFor, returning the whole LoginResponse. */
export async function loginFor(
  node: NodeHandle,
  tenant: string,
  username: string,
  opts: TokenOptions = {},
): Promise<LoginResponse> {
  const { db } = await node.services.tenants.require(tenant);
  const user = await new CredentialRepository(db).findByUsername(username);
  if (!user) throw new Error(`tokenFor: no user '${username}' in tenant '${tenant}'`);
  return node.services.auth.sessions.start({ tenant, user, method: opts.method ?? 'device' });
}

/** A free loopback port, for nodes whose public URL (and so the embedded realm issuer) must be known up front. */
export { freePort } from './net.js';

/**
 * Registers a hardware id to a device account, as an administrator does over REST (decision 1041):
 * only then may that account claim it in initRapidConnect.
 */
export async function registerHardware(
  node: NodeHandle,
  tenant: string,
  hardwareId: string,
  accountId: string,
): Promise<void> {
  const { Types } = await import('mongoose');
  const admin = {
    tenant,
    userId: new Types.ObjectId().toHexString(),
    username: 'test-administrator',
    role: 'admin',
    permissions: new Set(['tenant:admin'] as const),
    scheme: 'internal' as const,
  };
  await node.services.deviceRegistrations.register(admin, { hardwareId, accountId });
}
