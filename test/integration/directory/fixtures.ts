import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';

export interface Actor {
  id: string;
  token: string;
  username: string;
}

export interface World {
  node: TestNode;
  /** Users by name in tenant `a` (admin, alice & bob clinicians, pat patient, sam support, dev a device account). */
  a: Record<'admin' | 'alice' | 'bob' | 'pat' | 'sam' | 'dev', Actor>;
  /** The same cast in tenant `b`, for cross-tenant checks. */
  b: Record<'admin' | 'alice' | 'bob' | 'pat' | 'sam' | 'dev', Actor>;
  tenantA: string;
  tenantB: string;
}

const CAST = [
  ['admin', 'admin', 'Ada Admin'],
  ['alice', 'clinician', 'Alice Moreau'],
  ['bob', 'clinician', 'Bob Okafor'],
  ['pat', 'patient', 'Pat Patient'],
  ['sam', 'support', 'Sam Support'],
  ['dev', 'device', 'Ward headset'],
] as const;

async function cast(node: TestNode, tenant: string): Promise<World['a']> {
  const out = {} as World['a'];
  for (const [username, role, displayName] of CAST) {
    const id = await createUser(node, tenant, {
      username,
      role,
      displayName,
      kind: role === 'device' ? 'device' : 'person',
    });
    out[username] = { id: String(id), token: await tokenFor(node, tenant, username), username };
  }
  return out;
}

/**
 * A node with two tenants, each with the same cast of users and their tokens. `env` adds settings
 * (ROLES 'http,actors' where REST reaches the meeting actors: join by code, the waiting room).
 */
export async function world(tenantA = 'acme', tenantB = 'bravo', env: Record<string, string> = {}): Promise<World> {
  const node = await startTestNode(env);
  const a = await cast(node, tenantA);
  const b = await cast(node, tenantB);
  return { node, a, b, tenantA, tenantB };
}

export function as(w: World, who: Actor, tenant = w.tenantA) {
  const h = w.node.http;
  return {
    get: (path: string) => h.get(path, { tenant, token: who.token }),
    post: (path: string, body?: unknown) =>
      h.post(path, { tenant, token: who.token, ...(body === undefined ? {} : { body }) }),
  };
}
