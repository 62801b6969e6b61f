import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { satisfies, type Requirement } from '../../../src/kernel/requirement.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { call, must, type HubClient } from '../../support/hub-client.js';
import { tenantState } from '../../support/tenant-state.js';
import { ERROR_CODES } from '../../../src/kernel/errors.js';
import { HUB_METHODS } from '../../../src/hub/hub.role.js';
import { HUB_CASES, socketPool, type TenantKit } from './hub-cases.js';
import { FUZZ_ENV, fillPath, opsOf, restOperations } from '../hostile/kit.js';
import { ROLES, bodyFor, paramValues, seedTenant, type SeededTenant } from './seed.js';

const GRAPHQL: Record<string, string> = {
  me: '{ me { id displayName contact { displayName } } }',
  tenantConfig: '{ tenantConfig { tenant displayName } }',
  basicTenantInfo: '{ basicTenantInfo { name } }',
  generatePrivateServerConfig: '{ generatePrivateServerConfig { tenant } }',
  generatePrivateServerConfigQrCode: '{ generatePrivateServerConfigQrCode { dataUrl } }',
  tenantSecurityRules: '{ tenantSecurityRules { loginCodeTtlSeconds } }',
  myContacts: '{ myContacts { total items { id displayName } } }',
  contactAlphabets: '{ contactAlphabets { letter count } }',
  groupById: 'query G($g: ID!) { groupById(groupId: $g) { id name participants { displayName } } }',
  hasPin: '{ hasPin }',
  myNotice: '{ myNotice { id title body } }',
  auditTrail: '{ auditTrail { items { seq action } next } }',
  auditVerify: '{ auditVerify { ok verified headSeq } }',
  waitingRoom: 'query W($e: ID!) { waitingRoom(eventId: $e) { eventId waiting { userId name } } }',
  eventLedger: 'query L($e: ID!) { eventLedger(eventId: $e) { total items { displayName device joinedAt } } }',
  eventFiles: 'query F($e: ID!) { eventFiles(eventId: $e) { total items { source file { fileName url } } } }',
  sessionFiles: 'query S($s: String!) { sessionFiles(sessionId: $s) { total items { fileName url } } }',
  admit: 'mutation M($e: ID!, $u: ID!) { admit(eventId: $e, userId: $u) { eventId admitted } }',
  deny: 'mutation M($e: ID!, $u: ID!) { deny(eventId: $e, userId: $u, message: "matrix") { eventId denied } }',
  removeParticipant:
    'mutation M($e: ID!, $u: ID!) { removeParticipant(eventId: $e, userId: $u, reason: "matrix") { eventId affected } }',
  endMeeting: 'mutation M($e: ID!) { endMeeting(eventId: $e) { eventId ended } }',
  lockMeeting: 'mutation M($e: ID!) { lockMeeting(eventId: $e) { eventId locked } }',
  unlockMeeting: 'mutation M($e: ID!) { unlockMeeting(eventId: $e) { eventId locked } }',
  transferHost: 'mutation M($e: ID!, $u: ID!) { transferHost(eventId: $e, userId: $u) { hosts } }',
  addHost: 'mutation M($e: ID!, $u: ID!) { addHost(eventId: $e, userId: $u) { hosts } }',
  muteRequest: 'mutation M($e: ID!, $u: ID!) { muteRequest(eventId: $e, userId: $u, media: audio) { affected } }',
  answerHostAccess:
    'mutation M($e: ID!, $u: ID!) { answerHostAccess(eventId: $e, userId: $u, grant: false) { affected } }',
  consentToRecording:
    'mutation M($e: ID!) { consentToRecording(eventId: $e, requestId: "iso-consent", consent: true) { state } }',
};

/** GraphQL host controls of a meeting (decision 900): the event and the member acted on. */
const HOST_CONTROLS = [
  'admit',
  'deny',
  'removeParticipant',
  'endMeeting',
  'lockMeeting',
  'unlockMeeting',
  'transferHost',
  'addHost',
  'muteRequest',
  'answerHostAccess',
];

/** Variables of each GraphQL operation that takes ids, from the tenant whose ids are sent. */
const variablesOf = (name: string, t: SeededTenant): Record<string, string> =>
  name === 'groupById'
    ? { g: t.groupId }
    : name === 'sessionFiles'
      ? { s: t.sessionId }
      : ['waitingRoom', 'eventLedger', 'eventFiles', 'consentToRecording'].includes(name)
        ? { e: t.eventId }
        : HOST_CONTROLS.includes(name)
          ? { e: t.eventId, u: t.users.patient!.id }
          : {};

/** How another tenant's ids are refused: as ids that do not exist here, or as things the caller may not touch. */
const CROSS_REFUSALS = [
  'forbidden',
  ...Object.keys(ERROR_CODES).filter(
    (c) => c.endsWith('_not_found') && c !== 'route_not_found' && c !== 'tenant_not_found',
  ),
];

type Side = 'own' | 'other';
interface Cell {
  transport: string;
  op: string;
  role: string;
  side: Side;
  requires: Requirement;
  status: number;
  code?: string;
  text: string;
}

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

  beforeAll(async () => {
    node = await startTestNode({
      ROLES: 'http,hub,actors',
      ...FUZZ_ENV,
      HUB_RING_TIMEOUT_MS: '600000',
      HUB_DEVICE_HEARTBEAT_MS: '600000',
      // No timer ends an active call during the run (decision 1114): the matrix judges what requests change.
      HUB_CALL_PRESENCE_CHECK_MS: '3600000',
    });
    a = await seedTenant(node, 'isoa', 'MKRAQ7Z');
    b = await seedTenant(node, 'isob', 'MKRBQ7Z');
  }, 120_000);
  afterAll(async () => {
    await node?.destroy();
  });

  const has = (role: string, req: Requirement) => satisfies(req, new Set(BUILTIN_ROLES[role]!.permissions));
  const leaks = () =>
    cells.filter((c) => c.text.includes(b.marker)).map((c) => `${c.transport} ${c.op} as ${c.role} (${c.side})`);
  /** Lacking the permission -> permission_denied; holding it -> never 401 nor permission_denied. */
  const mismatches = (list: Cell[]) =>
    list
      .filter((c) => c.requires !== 'public' && c.requires !== 'authenticated' && c.side === 'own')
      .filter((c) =>
        has(c.role, c.requires) ? c.status === 401 || c.code === 'permission_denied' : c.code !== 'permission_denied',
      )
      .map((c) => `${c.transport} ${c.op} as ${c.role}: ${c.status} ${c.code}`);

  it('GraphQL: each operation x role x (own, other tenant ids)', async () => {
    for (const op of opsOf('graphql')) {
      for (const role of ROLES) {
        for (const [side, t] of [
          ['own', a],
          ['other', b],
        ] as const) {
          const r = await node.http.post('/graphql', {
            tenant: a.name,
            token: a.users[role]!.token,
            body: {
              query: GRAPHQL[op.name],
              variables: variablesOf(op.name, t),
            },
          });
          const code = r.body?.errors?.[0]?.extensions?.code;
          cells.push({
            transport: 'graphql',
            op: op.name,
            role,
            side,
            requires: op.requires,
            status: code === 'permission_denied' ? 403 : r.status,
            code,
            text: r.text,
          });
          if (op.name === 'groupById' && side === 'other' && has(role, op.requires))
            expect({ role, code }).toEqual({ role, code: 'group_not_found' });
        }
      }
    }
    expect(mismatches(cells.filter((c) => c.transport === 'graphql'))).toEqual([]);
    expect(leaks()).toEqual([]);
  }, 180_000);

  describe("hub: each method x role with valid arguments: own tenant succeeds, the other tenant's ids are refused and change nothing there", () => {
    let pool: ReturnType<typeof socketPool>;
    let ka: TenantKit;
    let kb: TenantKit;
    beforeAll(() => {
      pool = socketPool(node);
      let hw = 0;
      const kit = (t: SeededTenant): TenantKit => ({
        t,
        node,
        socket: (user) => pool.socket(t.name, user),
        hardwareId: () => `HW-${t.name}-${++hw}`,
        async event(me, opts = {}) {
          const organizer = await node.services.auth.verifyAccessToken(t.name, t.helpers.host.token);
          const e = await node.services.events.create(organizer, {
            name: `Consult ${t.marker}`,
            startAt: new Date().toISOString(),
            endAt: new Date(Date.now() + 3_600_000).toISOString(),
            participants: [{ userId: me.id, role: opts.role ?? 'participant' }],
            attachments: [],
          });
          const host = await pool.socket(t.name, t.helpers.host);
          if (opts.started) await must(host, 'initEvent', { eventId: String(e._id) });
          return { eventId: String(e._id), meetingCode: e.meetingCode, host };
        },
      });
      [ka, kb] = [kit(a), kit(b)];
    });
    afterAll(async () => {
      await pool?.closeAll();
      const hubCells = cells.filter((c) => c.transport === 'hub');
      const crossCodes: Record<string, number> = {};
      for (const c of hubCells.filter((x) => x.side === 'other')) crossCodes[c.code!] = (crossCodes[c.code!] ?? 0) + 1;
      process.stdout.write(
        `Isolation matrix, hub: ${hubCells.length} cells over ${HUB_METHODS.length} methods x ${ROLES.length} roles; ${hubCells.filter((c) => c.side === 'own' && c.status === 200).length} own-tenant successes; other tenant's ids refused as ${JSON.stringify(crossCodes)}\n`,
      );
    });

    it('has a case and a permission-table row for every method of the hub', () => {
      const methods = HUB_METHODS.map((m) => m.name).sort();
      // A new method without a case or a row fails here.
      expect({
        cases: Object.keys(HUB_CASES).sort(),
        table: opsOf('hub')
          .map((o) => o.name)
          .sort(),
      }).toEqual({ cases: methods, table: methods });
    });

    // One test per method (its six roles): each has its own time budget, and a red one names its method.
    it.each(HUB_METHODS.map((m) => [m.name, m] as const))(
      '%s',
      async (_name, m) => {
        const ask = (s: HubClient, method: string, args: unknown[]) => call(s, method as never, ...args);
        const problems: string[] = [];
        const first = cells.length;
        const op = opsOf('hub').find((o) => o.name === m.name)!;
        const c = HUB_CASES[m.name]!;
        for (const role of ROLES) {
          const meA = a.users[role]!;
          const sA = await pool.socket(a.name, meA);
          if (!has(role, op.requires)) {
            // Valid arguments of the caller's own tenant (made for a permitted user): the permission alone refuses them.
            const able = a.users[ROLES.find((r) => has(r, op.requires) && !c.cannot?.[r])!]!;
            const args = await c.build(ka, able, await pool.socket(a.name, able));
            const ack = await ask(sA, m.name, args);
            cells.push({
              transport: 'hub',
              op: m.name,
              role,
              side: 'own',
              requires: op.requires,
              status: ack.ok ? 200 : 403,
              code: ack.ok ? undefined : ack.error.code,
              text: JSON.stringify(ack),
            });
            await pool.closeAll();
            continue;
          }
          const cannot = c.cannot?.[role];
          const meB = b.users[role]!;
          const sB = await pool.socket(b.name, meB);
          // A role that holds the permission but can never reach the state the method needs gets arguments
          // made for a role that can, and its one documented refusal.
          const maker = cannot ? ROLES.find((r) => has(r, op.requires) && !c.cannot?.[r])! : role;
          const argsA = cannot
            ? await c.build(ka, a.users[maker]!, await pool.socket(a.name, a.users[maker]!))
            : await c.build(ka, meA, sA);
          const argsB = cannot
            ? await c.build(kb, b.users[maker]!, await pool.socket(b.name, b.users[maker]!))
            : await c.build(kb, meB, sB);
          for (const [side, args] of [
            ['own', argsA],
            ['other', argsB],
          ] as const) {
            const parsed = m.args.safeParse(args);
            if (!parsed.success)
              problems.push(
                `${m.name} ${side}: the case's arguments fail the method's schema: ${parsed.error.message}`,
              );
          }
          // The other tenant's ids, from a socket in exactly the state in which its own ids succeed.
          const before = await tenantState(node, b.name);
          const cross = await ask(sA, m.name, argsB);
          const after = await tenantState(node, b.name);
          cells.push({
            transport: 'hub',
            op: m.name,
            role,
            side: 'other',
            requires: op.requires,
            status: cross.ok ? 200 : 400,
            code: cross.ok ? undefined : cross.error.code,
            text: JSON.stringify(cross),
          });
          const expectCross = cannot
            ? [cannot]
            : m.name === 'refreshToken'
              ? ['wrong_tenant', 'forbidden']
              : CROSS_REFUSALS;
          if (cross.ok || !expectCross.includes(cross.error.code))
            problems.push(`${m.name} as ${role} with tenant B's ids: ${JSON.stringify(cross).slice(0, 200)}`);
          if (JSON.stringify(before) !== JSON.stringify(after))
            problems.push(`${m.name} as ${role} with tenant B's ids changed tenant B's state`);
          // Own tenant, permitted role: the same call with its own ids succeeds.
          const own = await ask(sA, m.name, argsA);
          cells.push({
            transport: 'hub',
            op: m.name,
            role,
            side: 'own',
            requires: op.requires,
            status: own.ok ? 200 : 400,
            code: own.ok ? undefined : own.error.code,
            text: JSON.stringify(own),
          });
          if (cannot ? own.ok || own.error.code !== cannot : !own.ok)
            problems.push(`${m.name} as ${role} in its own tenant: ${JSON.stringify(own).slice(0, 200)}`);
          // And tenant B's arguments were valid where they belong: B's user of the same role succeeds with them.
          const home = cannot ? undefined : await ask(sB, m.name, argsB);
          if (home && !home.ok)
            problems.push(`${m.name} as ${role} in tenant B with B's ids: ${JSON.stringify(home).slice(0, 200)}`);
          await pool.closeAll();
        }
        expect(problems).toEqual([]);
        const mine = cells.slice(first);
        const permitted = ROLES.filter((r) => has(r, op.requires)).length;
        expect(mine.length).toBe(ROLES.length + permitted);
        const unreachable = Object.keys(c.cannot ?? {}).length;
        expect(mine.filter((x) => x.side === 'own' && x.status === 200).length).toBe(permitted - unreachable);
        expect(mismatches(mine)).toEqual([]);
        expect(mine.filter((x) => x.text.includes(b.marker)).map((x) => `${x.op} as ${x.role} (${x.side})`)).toEqual(
          [],
        );
      },
      120_000,
    );
  });

  /** Body fields of bodyFor() that carry a tenant's ids. */
  const BODY_ID_KEYS = new Set([
    'groupId',
    'eventId',
    'noticeId',
    'importId',
    'userId',
    'contactId',
    'participantIds',
    'participants',
  ]);

  it('REST: each endpoint x role x (own, other tenant ids)', async () => {
    // Logging out runs last: it revokes the caller's own sessions.
    const ops = restOperations().sort((x, y) => Number(x.id === 'account.logout') - Number(y.id === 'account.logout'));
    const crossRefusals: string[] = [];
    const bodyIdCells: { op: string; role: string; side: 'own' | 'other'; status: number }[] = [];
    for (const op of ops) {
      for (const role of ROLES) {
        for (const [side, t] of [
          ['own', a],
          ['other', b],
        ] as const) {
          const path = fillPath(op.template, paramValues(t, role));
          const r = await node.http[op.method](path, {
            tenant: a.name,
            token: a.users[role]!.token,
            ...(op.method === 'get' ? {} : { body: bodyFor(t, role, op.id) }),
          });
          cells.push({
            transport: 'rest',
            op: op.id,
            role,
            side,
            requires: op.requires,
            status: r.status,
            code: r.body?.code,
            text: r.text,
          });
          if (!op.params.length && op.bodyKeys.some((k) => BODY_ID_KEYS.has(k)) && has(role, op.requires))
            bodyIdCells.push({ op: op.id, role, side, status: r.status });
          expect({ op: op.id, role, side, status: r.status < 500 }).toEqual({ op: op.id, role, side, status: true });
          // Ids in the path or in the body: the other tenant's must be refused the same way.
          const carriesIds = op.params.length > 0 || op.bodyKeys.some((k) => BODY_ID_KEYS.has(k));
          if (side === 'other' && carriesIds && r.status < 400 && op.requires !== 'public')
            crossRefusals.push(`${op.id} as ${role}: ${r.status} ${r.text.slice(0, 120)}`);
        }
      }
    }
    expect(mismatches(cells.filter((c) => c.transport === 'rest'))).toEqual([]);
    expect(crossRefusals).toEqual([]);
    // Ids carried only in the body: for every such endpoint some permitted role's call succeeds with its own
    // tenant's ids and is refused with the other tenant's, so the refusal is the ids', not the body's.
    const bodyOps = [...new Set(bodyIdCells.map((c) => c.op))].sort();
    const proven = bodyOps.filter((id) =>
      ROLES.some((role) => {
        const own = bodyIdCells.find((c) => c.op === id && c.role === role && c.side === 'own');
        const other = bodyIdCells.find((c) => c.op === id && c.role === role && c.side === 'other');
        return own && other && own.status < 400 && other.status >= 400;
      }),
    );
    expect(bodyOps.length).toBeGreaterThanOrEqual(10);
    expect(proven).toEqual(bodyOps);
    expect(leaks()).toEqual([]);
    // The check is not vacuous: tenant A's own marker does reach tenant A.
    expect(cells.filter((c) => c.text.includes(a.marker)).length).toBeGreaterThan(20);
    const counts = { rest: 0, graphql: 0, hub: 0 } as Record<string, number>;
    for (const c of cells) counts[c.transport]! += 1;
    process.stdout.write(
      `Isolation matrix: ${cells.length} cells (${JSON.stringify(counts)}), ${leaks().length} leaks\n`,
    );
  }, 240_000);
});
