import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BUILTIN_ROLES } from '../../../src/auth/permissions.js';
import { satisfies, type Requirement } from '../../../src/auth/permission-table.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import { FUZZ_ENV, fillPath, opsOf, restOperations } from '../hostile/kit.js';
import { ROLES, bodyFor, paramValues, seedTenant, type SeededTenant } from './seed.js';

const GRAPHQL: Record<string, string> = {
  me: '{ me { id displayName contact { displayName } } }', tenantConfig: '{ tenantConfig { tenant displayName } }', basicTenantInfo: '{ basicTenantInfo { name } }',
  generatePrivateServerConfig: '{ generatePrivateServerConfig { tenant } }', generatePrivateServerConfigQrCode: '{ generatePrivateServerConfigQrCode { dataUrl } }',
  tenantSecurityRules: '{ tenantSecurityRules { loginCodeTtlSeconds } }', myContacts: '{ myContacts { total items { id displayName } } }',
  contactAlphabets: '{ contactAlphabets { letter count } }', groupById: 'query G($g: ID!) { groupById(groupId: $g) { id name participants { displayName } } }',
  hasPin: '{ hasPin }', myNotice: '{ myNotice { id title body } }',
};

/** Hub methods addressing an event by id: tenant B's event id must never work for tenant A. */
const EVENT_METHODS = ['initEvent', 'joinEvent', 'getMeetingDetails', 'addDeviceToEvent', 'startRecording', 'stopRecording'];

type Side = 'own' | 'other';
interface Cell { transport: string; op: string; role: string; side: Side; requires: Requirement; status: number; code?: string; text: string }

/**
 * Every REST endpoint, GraphQL operation and hub method x (own tenant's ids, other tenant's ids) x each
 * built-in role, all sent to tenant A's host with tenant A's tokens. The answer must match the permission
 * table, and tenant B's marker must never appear in anything tenant A receives.
 */
describe('isolation matrix: operations x tenants x roles', () => {
  let node: TestNode;
  let a: SeededTenant;
  let b: SeededTenant;
  const cells: Cell[] = [];
  const sockets: HubClient[] = [];

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors', ...FUZZ_ENV });
    a = await seedTenant(node, 'isoa', 'MKRAQ7Z');
    b = await seedTenant(node, 'isob', 'MKRBQ7Z');
  }, 120_000);
  afterAll(async () => {
    for (const s of sockets) s.close();
    await node?.destroy();
  });

  const has = (role: string, req: Requirement) => satisfies(req, new Set(BUILTIN_ROLES[role]!.permissions));
  const leaks = () => cells.filter((c) => c.text.includes(b.marker)).map((c) => `${c.transport} ${c.op} as ${c.role} (${c.side})`);
  /** Lacking the permission -> permission_denied; holding it -> never 401 nor permission_denied. */
  const mismatches = (list: Cell[]) =>
    list.filter((c) => c.requires !== 'public' && c.requires !== 'authenticated' && c.side === 'own')
      .filter((c) => (has(c.role, c.requires) ? c.status === 401 || c.code === 'permission_denied' : c.code !== 'permission_denied'))
      .map((c) => `${c.transport} ${c.op} as ${c.role}: ${c.status} ${c.code}`);

  it('GraphQL: each operation x role x (own, other tenant ids)', async () => {
    for (const op of opsOf('graphql')) {
      for (const role of ROLES) {
        for (const [side, t] of [['own', a], ['other', b]] as const) {
          const r = await node.http.post('/graphql', { tenant: a.name, token: a.users[role]!.token, body: { query: GRAPHQL[op.name], variables: op.name === 'groupById' ? { g: t.groupId } : {} } });
          const code = r.body?.errors?.[0]?.extensions?.code;
          cells.push({ transport: 'graphql', op: op.name, role, side, requires: op.requires, status: code === 'permission_denied' ? 403 : r.status, code, text: r.text });
          if (op.name === 'groupById' && side === 'other' && has(role, op.requires)) expect({ role, code }).toEqual({ role, code: 'group_not_found' });
        }
      }
    }
    expect(mismatches(cells.filter((c) => c.transport === 'graphql'))).toEqual([]);
    expect(leaks()).toEqual([]);
  }, 180_000);

  it('hub: each method x role x (own, other tenant ids)', async () => {
    for (const role of ROLES) {
      const s = await connect(node.url!, a.name, { token: a.users[role]!.token });
      sockets.push(s);
      for (const op of opsOf('hub')) {
        for (const [side, t] of [['own', a], ['other', b]] as const) {
          const args = side === 'own' ? {} : { ...bodyFor(t, role), targetUserId: t.users.patient!.id, deviceId: t.users.device!.id, calleeIds: [t.users.patient!.id] };
          const ack = await (s.timeout(15_000) as unknown as { emitWithAck(e: string, ...x: unknown[]): Promise<any> }).emitWithAck(op.name, args);
          const code = ack.ok ? undefined : ack.error?.code;
          cells.push({ transport: 'hub', op: op.name, role, side, requires: op.requires, status: code === 'permission_denied' ? 403 : ack.ok ? 200 : 400, code, text: JSON.stringify(ack) });
          expect({ op: op.name, role, internal: code === 'internal' }).toEqual({ op: op.name, role, internal: false });
          if (side === 'other' && EVENT_METHODS.includes(op.name)) expect({ op: op.name, role, ok: ack.ok }).toEqual({ op: op.name, role, ok: false });
        }
      }
    }
    expect(mismatches(cells.filter((c) => c.transport === 'hub'))).toEqual([]);
    expect(leaks()).toEqual([]);
  }, 180_000);

  it('REST: each endpoint x role x (own, other tenant ids)', async () => {
    // Logging out runs last: it revokes the caller's own sessions.
    const ops = restOperations().sort((x, y) => Number(x.id === 'account.logout') - Number(y.id === 'account.logout'));
    const crossRefusals: string[] = [];
    for (const op of ops) {
      for (const role of ROLES) {
        for (const [side, t] of [['own', a], ['other', b]] as const) {
          const path = fillPath(op.template, paramValues(t, role));
          const r = await node.http[op.method](path, { tenant: a.name, token: a.users[role]!.token, ...(op.method === 'get' ? {} : { body: bodyFor(t, role) }) });
          cells.push({ transport: 'rest', op: op.id, role, side, requires: op.requires, status: r.status, code: r.body?.code, text: r.text });
          expect({ op: op.id, role, side, status: r.status < 500 }).toEqual({ op: op.id, role, side, status: true });
          if (side === 'other' && op.params.length && r.status < 400 && op.requires !== 'public') crossRefusals.push(`${op.id} as ${role}: ${r.status} ${r.text.slice(0, 120)}`);
        }
      }
    }
    expect(mismatches(cells.filter((c) => c.transport === 'rest'))).toEqual([]);
    expect(crossRefusals).toEqual([]);
    expect(leaks()).toEqual([]);
    // The check is not vacuous: tenant A's own marker does reach tenant A.
    expect(cells.filter((c) => c.text.includes(a.marker)).length).toBeGreaterThan(20);
    const counts = { rest: 0, graphql: 0, hub: 0 } as Record<string, number>;
    for (const c of cells) counts[c.transport]! += 1;
    process.stdout.write(`Isolation matrix: ${cells.length} cells (${JSON.stringify(counts)}), ${leaks().length} leaks\n`);
  }, 240_000);
});
