import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import {
  FUZZ_ENV,
  FUZZ_PER_TARGET,
  SOAK,
  Tally,
  batches,
  fuzz,
  graphqlBreach,
  nastyString,
  nastyValue,
  opsOf,
  runs,
  selected,
} from './kit.js';

/** A well-formed document per operation, with its arguments taken from variables the fuzzer fills. */
const DOCUMENTS: Record<string, string> = {
  me: 'query Q { me { id username contact { id displayName } } }',
  tenantConfig: 'query Q { tenantConfig { tenant uploads { maxBytes } } }',
  basicTenantInfo: 'query Q { basicTenantInfo { name } }',
  generatePrivateServerConfig: 'query Q { generatePrivateServerConfig { tenant } }',
  generatePrivateServerConfigQrCode: 'query Q { generatePrivateServerConfigQrCode { dataUrl } }',
  tenantSecurityRules: 'query Q { tenantSecurityRules { loginCodeTtlSeconds } }',
  myContacts:
    'query Q($s: ContactSortType, $p: PagingInput, $a: String, $c: Boolean) { myContacts(sortType: $s, paging: $p, alphabet: $a, isCallList: $c) { total items { id displayName } } }',
  contactAlphabets: 'query Q { contactAlphabets { letter count } }',
  groupById: 'query Q($g: ID!) { groupById(groupId: $g) { id name participants { id } } }',
  hasPin: 'query Q { hasPin }',
  myNotice: 'query Q { myNotice { id title } }',
  auditTrail: 'query Q($p: AuditFilter) { auditTrail(filter: $p) { items { seq action actorId } next } }',
  auditVerify: 'query Q { auditVerify { ok verified headSeq firstBroken { seq } } }',
  waitingRoom: 'query Q($e: ID!) { waitingRoom(eventId: $e) { eventId waiting { userId name kind } } }',
  eventLedger:
    'query Q($g: ID!, $p: PagingInput) { eventLedger(eventId: $g, paging: $p) { total items { participantKey device } } }',
  eventFiles:
    'query Q($g: ID!, $p: PagingInput) { eventFiles(eventId: $g, paging: $p) { total items { source file { id url } } } }',
  sessionFiles:
    'query Q($g: String!, $p: PagingInput) { sessionFiles(sessionId: $g, paging: $p) { total items { id url } } }',
  admit:
    'mutation Q($g: ID!, $a: ID, $c: Boolean, $s: String) { admit(eventId: $g, userId: $a, all: $c, requestId: $s) { admitted } }',
  deny: 'mutation Q($g: ID!, $a: ID, $c: Boolean, $p: String) { deny(eventId: $g, userId: $a, all: $c, message: $p) { denied } }',
  removeParticipant:
    'mutation Q($g: ID!, $a: String, $s: String) { removeParticipant(eventId: $g, userId: $g, reason: $a, requestId: $s) { eventId } }',
  endMeeting:
    'mutation Q($g: ID!, $a: String, $s: String) { endMeeting(eventId: $g, reason: $a, requestId: $s) { eventId } }',
  lockMeeting: 'mutation Q($g: ID!, $s: String) { lockMeeting(eventId: $g, requestId: $s) { locked } }',
  unlockMeeting: 'mutation Q($g: ID!, $s: String) { unlockMeeting(eventId: $g, requestId: $s) { locked } }',
  transferHost: 'mutation Q($g: ID!, $a: ID!) { transferHost(eventId: $g, userId: $a) { hosts } }',
  addHost: 'mutation Q($g: ID!, $a: ID!) { addHost(eventId: $g, userId: $a) { hosts } }',
  muteRequest:
    'mutation Q($g: ID!, $a: ID!, $s: MuteMedia, $p: String) { muteRequest(eventId: $g, userId: $a, media: $s, message: $p) { affected } }',
  answerHostAccess:
    'mutation Q($g: ID!, $a: ID!, $c: Boolean!, $p: String) { answerHostAccess(eventId: $g, userId: $a, grant: $c, message: $p) { affected } }',
  consentToRecording:
    'mutation Q($g: ID!, $s: String!, $c: Boolean!) { consentToRecording(eventId: $g, requestId: $s, consent: $c) { state } }',
};

describe('hostile GraphQL input: every operation, and query bombs', () => {
  let node: TestNode;
  let admin: string;
  const tally = new Tally();

  beforeAll(async () => {
    // GraphQL waitingRoom asks the meeting actors: an actors role answers them.
    node = await startTestNode({ ROLES: 'http,actors', ...FUZZ_ENV });
    await createUser(node, 'fuzzg', { username: 'ada', role: 'admin' });
    admin = await tokenFor(node, 'fuzzg', 'ada');
  });
  afterAll(async () => node?.destroy());

  const gql = (body: unknown, token: string | undefined = admin) =>
    node.http.post('/graphql', { tenant: 'fuzzg', ...(token ? { token } : {}), body });
  const rawGql = (text: string) =>
    node.http.post('/graphql', {
      tenant: 'fuzzg',
      token: admin,
      rawBody: text,
      headers: { 'content-type': 'application/json' },
    });

  it('covers every GraphQL operation of the permission table', () => {
    expect(
      opsOf('graphql')
        .map((o) => o.name)
        .sort(),
    ).toEqual(Object.keys(DOCUMENTS).sort());
  });

  it(
    `answers ${FUZZ_PER_TARGET} hostile variable sets per operation with coded errors, never 5xx`,
    async () => {
      const variables = fc.record(
        { s: nastyValue, p: nastyValue, a: nastyValue, c: nastyValue, g: nastyValue },
        { requiredKeys: [] },
      );
      const ops = opsOf('graphql').filter((o) => selected(o.id));
      for (const op of ops) {
        const [arb, numRuns] = batches(fc.tuple(variables, fc.constantFrom(admin, undefined)));
        await fuzz(arb, numRuns, async (batch) => {
          const out = await Promise.all(
            batch.map(async ([vars, token]) => {
              const problem = graphqlBreach(await gql({ query: DOCUMENTS[op.name], variables: vars }, token));
              tally.add(op.id, problem);
              return problem;
            }),
          );
          return out.find(Boolean);
        });
      }
      expect(tally.breaches).toEqual([]);
      expect(ops.filter((o) => (tally.perOp.get(o.id) ?? 0) < FUZZ_PER_TARGET).map((o) => o.id)).toEqual([]);
    },
    SOAK ? 1_800_000 : 120_000,
  );

  it(
    'answers hostile documents, envelopes and operation names with coded errors',
    async () => {
      const envelope = fc.oneof(
        fc.record({ query: nastyString }),
        fc.record({ query: nastyValue, variables: nastyValue, operationName: nastyValue }, { requiredKeys: [] }),
        fc.record({
          query: fc.constantFrom(...Object.values(DOCUMENTS)),
          operationName: nastyString,
          extensions: nastyValue,
        }),
        fc.constantFrom(
          '{ me { id } }'.slice(0, 7),
          'query { me { ...F } }',
          'fragment F on Me { ...F } { me { ...F } }',
          'mutation { x }',
          'subscription { x }',
          '{ __typename @skip }',
        ),
      );
      await fuzz(envelope, runs(80), async (body) => {
        const problem = graphqlBreach(typeof body === 'string' ? await gql({ query: body }) : await gql(body));
        tally.add('graphql.document', problem && `${problem} for ${JSON.stringify(body).slice(0, 200)}`);
        return problem;
      });
      for (const text of ['{"query":', '[', 'null', '"{ me { id } }"', '{"query": "{ me { id } }", "variables": "x"}'])
        tally.add('graphql.document', graphqlBreach(await rawGql(text)));
      expect(tally.breaches).toEqual([]);
    },
    SOAK ? 1_800_000 : 120_000,
  );

  const refused = (r: { status: number; body: any }) => ({
    status: r.status < 500,
    code: r.body?.errors?.[0]?.extensions?.code ?? r.body?.code,
    data: r.body?.data ?? null,
  });

  it('refuses depth bombs (introspection included), alias bombs, fragment bombs, directive bombs and batches', async () => {
    const depth = await gql({ query: `{ me { ${'contact { '.repeat(40)}id${' }'.repeat(40)} } }` });
    expect(refused(depth)).toMatchObject({ status: true, code: 'validation_failed' });
    const typeRef = (n: number): string => (n === 0 ? 'name' : `name kind ofType { ${typeRef(n - 1)} }`);
    const introspection = await gql({
      query: `{ __schema { types { name fields { name type { ${typeRef(9)} } } } } }`,
    });
    expect(introspection.status).toBeLessThan(500);

    // Above the parser's token bound (decision 222): refused before validation.
    const aliases = await gql({
      query: `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: me { id username }`).join(' ')} }`,
    });
    expect(refused(aliases)).toMatchObject({ status: true, code: 'bad_request' });
    const listAliases = await gql({
      query: `{ ${Array.from({ length: 60 }, (_, i) => `c${i}: myContacts { items { id displayName } }`).join(' ')} }`,
    });
    expect(refused(listAliases)).toMatchObject({ status: true, code: 'validation_failed' });

    const levels = 40;
    const frags = Array.from({ length: levels }, (_, i) =>
      i === levels - 1 ? `fragment F${i} on Me { id }` : `fragment F${i} on Me { ...F${i + 1} ...F${i + 1} }`,
    ).join(' ');
    const fragmentBomb = await gql({ query: `{ me { ...F0 } } ${frags}` });
    expect(refused(fragmentBomb)).toMatchObject({ status: true, code: 'validation_failed' });

    // 5 000 directives are 30 000 parser tokens: refused by the parser's token bound before validation.
    const directives = await gql({ query: `{ me ${'@include(if: true) '.repeat(5000)} { id } }` });
    expect(refused(directives)).toMatchObject({ status: true, code: 'bad_request' });

    const batch = await gql(Array.from({ length: 200 }, () => ({ query: '{ me { id } }' })));
    expect(batch.status).toBe(400);
    tally.add(
      'graphql.bombs',
      [depth, introspection, aliases, listAliases, fragmentBomb, directives, batch].map(graphqlBreach).find(Boolean),
    );
    expect(tally.breaches).toEqual([]);
  });

  it('still answers /healthz afterwards', async () => {
    expect((await node.http.get('/healthz')).status).toBe(200);
    process.stdout.write(
      `GraphQL fuzz: ${tally.total} inputs over ${tally.perOp.size} operations/groups (min ${Math.min(...opsOf('graphql').map((o) => tally.perOp.get(o.id) ?? 0))} per operation), ${tally.breaches.length} breaches\n`,
    );
  });
});
