import { GraphQLError, type DocumentNode, type GraphQLSchema } from 'graphql';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { ERROR_CODES } from '../../kernel/errors.js';

/** Budget of a signed-in caller's document (estimated work units, see FIELD_COSTS). */
export const SIGNED_IN_BUDGET = 1000;
/** Budget of a document sent without a token: the public operations and a few `__typename`s. */
export const ANONYMOUS_BUDGET = 30;

/**
 * What a field costs beyond its children, weighed by measured work (docs/decisions/222): rendering
 * the private-server QR code is a PNG encode (about 30 ms of CPU on the shared 2-core machine), a
 * contact search or the alphabet index is a database query with a sort, `me` and group lookups are
 * point reads. Any other field costs 1.
 */
export const FIELD_COSTS: Record<string, number> = {
  'Query.generatePrivateServerConfigQrCode': 400,
  'Query.generatePrivateServerConfig': 10,
  // Query.myContacts: weighed by its page size (PAGED below): 50 for the default 20.
  'Query.contactAlphabets': 40,
  'Query.me': 10,
  'Me.contact': 10,
  'Query.groupById': 10,
  'Group.owner': 5,
  'Group.participants': 20,
  'Query.tenantConfig': 5,
  'Query.tenantSecurityRules': 5,
  'Query.basicTenantInfo': 5,
  'Query.hasPin': 5,
  'Query.myNotice': 5,
  // Reads a page of up to 500 entries; verification re-hashes the whole chain (a full scan).
  'Query.auditTrail': 40,
  'Query.auditVerify': 400,
  'Query.waitingRoom': 10,
  // Host controls: one meeting actor turn each (decision 900).
  'Mutation.admit': 10,
  'Mutation.deny': 10,
  'Mutation.removeParticipant': 10,
  'Mutation.endMeeting': 10,
  'Mutation.lockMeeting': 10,
  'Mutation.unlockMeeting': 10,
  'Mutation.transferHost': 10,
  'Mutation.addHost': 10,
  'Mutation.muteRequest': 10,
  'Mutation.answerHostAccess': 10,
  // Recording consent: one meeting actor turn (decision 910).
  'Mutation.consentToRecording': 10,
};

/**
 * What one contact of a page costs beyond the search itself: reading, presence and favourites, and the
 * response. A page of the default 20 weighs the table's 50; a page of 100 weighs 210 (measured: ten
 * pages of 100 in one document held the event loop 40-100 ms at 5,000 contacts, decision 641).
 */
const PER_PAGE_ITEM = 2;
const PAGED: Record<string, number> = {
  'Query.myContacts': 10,
  // An event read, then a page of ledger rows or files and a count.
  'Query.eventLedger': 10,
  'Query.eventFiles': 10,
  'Query.sessionFiles': 10,
};

/** The page size a paged field will really serve: `paging.take` (default 20), clamped to PAGE_MAX_TAKE like the service clamps it. */
function pageSize(args: Record<string, unknown>, pageMaxTake: number): number {
  const take = (args.paging as { take?: unknown } | undefined)?.take;
  return typeof take === 'number' && Number.isFinite(take) ? Math.min(Math.max(take, 1), pageMaxTake) : 20;
}

const weighted =
  (pageMaxTake: number): ComplexityEstimator =>
  ({ type, field, args, childComplexity }) => {
    // Introspection reads the schema in memory, bounded by the schema's size: one unit, as in ./limits.ts,
    // so explorers and code generators load the schema without a token (it describes no one's data).
    if (field.name === '__schema' || field.name === '__type') return 1;
    const key = `${type.name}.${field.name}`;
    const paged = PAGED[key];
    if (paged !== undefined) return paged + PER_PAGE_ITEM * pageSize(args, pageMaxTake) + childComplexity;
    const own = FIELD_COSTS[key];
    return own === undefined ? undefined : own + childComplexity;
  };

/**
 * Refuses a document whose weighed cost exceeds the caller's budget, before any resolver runs.
 * Runs after validation (./limits.ts), which already bounded the document's size and fragment
 * fan-out, so this walk cannot be made exponential.
 */
export function checkCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
  signedIn: boolean,
  pageMaxTake = 100,
): number {
  const budget = signedIn ? SIGNED_IN_BUDGET : ANONYMOUS_BUDGET;
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      operationName,
      variables: variables ?? {},
      estimators: [weighted(pageMaxTake), simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch (e) {
    // The variables do not fit the operation (coercion failed): the same refusal execution would give.
    throw new GraphQLError((e as Error).message, {
      extensions: { code: 'validation_failed', http: { status: ERROR_CODES.validation_failed.status } },
    });
  }
  if (cost <= budget) return cost;
  // Without a token the remedy is to sign in: the document is refused as unauthenticated (401).
  const code = signedIn ? 'query_too_complex' : 'unauthenticated';
  throw new GraphQLError(
    `Query cost ${cost} exceeds the ${signedIn ? 'signed-in' : 'anonymous'} budget of ${budget}${signedIn ? '' : '; sign in'}`,
    {
      extensions: { code, http: { status: ERROR_CODES[code].status } },
    },
  );
}
