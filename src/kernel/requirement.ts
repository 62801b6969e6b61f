import type { Permission } from './permissions.js';

/**
 * What an operation requires: a permission, `authenticated` (any signed-in principal, the operation
 * checks ownership itself) or `public` (no token; the operation authenticates by other means such as
 * a refresh token, a login code or the provisioning code).
 *
 * Each operation declares its requirement next to what the transport serves: a REST route spec beside
 * its method and path, a hub method beside its name, a GraphQL operation in the resolvers' table by
 * name. docs/permissions.md is rendered from those declarations (src/operations/).
 */
export type Requirement = Permission | 'authenticated' | 'public';

/** Whether a principal's permissions satisfy a requirement (`public` always, `authenticated` with any principal). */
export function satisfies(req: Requirement, permissions: ReadonlySet<string> | undefined): boolean {
  if (req === 'public') return true;
  if (!permissions) return false;
  return req === 'authenticated' || permissions.has(req);
}

/**
 * The rules beyond the permission that several transports serve alike (the same meeting control over
 * REST, GraphQL and the hub), in the words docs/permissions.md shows.
 */
export const RULE_NOTES = {
  hostOfMeeting: 'and a host of the meeting (not_meeting_host otherwise)',
  hostOfEvent: 'and a host of the event (not_meeting_host otherwise)',
  askedForConsent: 'and asked by the consent request (a member of the meeting, or a joiner held for consent)',
  ledgerReader: 'and a host of the event or tenant:admin (not_meeting_host otherwise)',
  signsFirst: 'signs the new entries first, as the periodic checkpoint would (decision 1020)',
} as const;
