import type { Principal } from '../../kernel/principal.js';
import type { AuditService } from './audit.service.js';

/** What a service needs of the audit trail: one append (docs/audit.md). */
export type AuditRecorder = Pick<AuditService, 'record'>;

/** Where an entry points beyond its actor: the person or thing acted on, the consultation, the facts. */
export interface AuditTarget {
  subjectId?: string;
  eventId?: string;
  details?: Record<string, unknown>;
  outcome?: 'success' | 'failure';
}

/**
 * The entry of an action taken by `p`, attributed to the person at the keyboard: the impersonator while
 * impersonating, with the impersonated user as `details.onBehalfOf`, so both identities are on record.
 */
export function auditEntry(p: Principal, action: string, t: AuditTarget = {}) {
  return {
    action,
    outcome: t.outcome ?? ('success' as const),
    actorId: p.actorUserId ?? p.userId,
    ...(t.subjectId ? { subjectId: t.subjectId } : {}),
    ...(t.eventId ? { eventId: t.eventId } : {}),
    details: { ...t.details, ...(p.actorUserId ? { onBehalfOf: p.userId } : {}) },
  };
}

/** Records an action of `p` in its tenant's trail (awaited: an action is never left unrecorded). */
export async function recordBy(
  audit: AuditRecorder | undefined,
  p: Principal,
  action: string,
  t: AuditTarget = {},
): Promise<void> {
  await audit?.record(p.tenant, auditEntry(p, action, t));
}
