import { RULE_NOTES, type Requirement } from '../../kernel/requirement.js';

const HOST_OF_MEETING = { requires: 'meetings:host', note: RULE_NOTES.hostOfMeeting } as const;
const HOST_OF_EVENT = { requires: 'meetings:host', note: RULE_NOTES.hostOfEvent } as const;

/**
 * What each GraphQL operation (Query or Mutation field) requires, by its name in the schema; resolvers
 * ask `need(ctx, name)` (context.ts). docs/permissions.md lists them as `graphql.<name>`, and a test
 * holds the names to the schema's Query and Mutation fields.
 */
export const GRAPHQL_OPERATIONS = {
  me: { requires: 'profile:read' },
  tenantConfig: { requires: 'tenant:read' },
  basicTenantInfo: { requires: 'public' },
  generatePrivateServerConfig: { requires: 'tenant:admin' },
  generatePrivateServerConfigQrCode: { requires: 'tenant:admin' },
  tenantSecurityRules: { requires: 'tenant:read' },
  myContacts: { requires: 'contacts:read' },
  contactAlphabets: { requires: 'contacts:read' },
  groupById: { requires: 'contacts:read' },
  hasPin: { requires: 'profile:read' },
  myNotice: { requires: 'notices:read' },
  auditTrail: { requires: 'audit:read' },
  auditVerify: { requires: 'audit:read', note: RULE_NOTES.signsFirst },
  admit: HOST_OF_EVENT,
  deny: HOST_OF_EVENT,
  removeParticipant: HOST_OF_MEETING,
  endMeeting: HOST_OF_MEETING,
  lockMeeting: HOST_OF_MEETING,
  unlockMeeting: HOST_OF_MEETING,
  transferHost: HOST_OF_MEETING,
  addHost: HOST_OF_MEETING,
  muteRequest: HOST_OF_MEETING,
  answerHostAccess: HOST_OF_MEETING,
  consentToRecording: { requires: 'meetings:join', note: RULE_NOTES.askedForConsent },
  waitingRoom: HOST_OF_EVENT,
  eventLedger: { requires: 'events:read', note: RULE_NOTES.ledgerReader },
  eventFiles: { requires: 'media:read', note: 'the media access rule: a member of the event or tenant:admin' },
  sessionFiles: {
    requires: 'media:read',
    note: "the media access rule: the call's members and tenant:admin see all, anyone else their own uploads",
  },
} as const satisfies Record<string, { requires: Requirement; note?: string }>;

export type GraphQLOperation = keyof typeof GRAPHQL_OPERATIONS;
