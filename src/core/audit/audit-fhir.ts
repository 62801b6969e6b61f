import type { ChainedEntry as AuditRecord } from '../../data/audit-chain.js';

/** How a user id is referenced in FHIR: by the kind of account behind it. */
export type ParticipantKind = 'Practitioner' | 'Patient' | 'Device';

/** Code system of the service's own action names (docs/audit.md). */
export const ACTION_SYSTEM = 'urn:consult:audit-action';
const DCM = 'http://dicom.nema.org/resources/ontology/DCM';

const AUTHENTICATION_AREAS = ['signin', 'logout', 'session', 'login_code', 'pin', 'offline_token'];

function isAuthentication(action: string): boolean {
  return AUTHENTICATION_AREAS.includes(action.split('.')[0]!);
}

/** DICOM audit event types (the value set FHIR R4's AuditEvent.type uses), by the action's area. */
function eventType(action: string): { system: string; code: string; display: string } {
  const area = action.split('.')[0]!;
  if (isAuthentication(action)) return { system: DCM, code: '110114', display: 'User Authentication' };
  if (['impersonation', 'role', 'tenant', 'security_rules'].includes(area))
    return { system: DCM, code: '110136', display: 'Security Roles Changed' };
  if (/\.(download|thumbnail|export)$/.test(action)) return { system: DCM, code: '110106', display: 'Export' };
  if (action === 'presence.read') return { system: DCM, code: '110112', display: 'Query' };
  if (action === 'media.upload' || area === 'import') return { system: DCM, code: '110107', display: 'Import' };
  return { system: DCM, code: '110100', display: 'Application Activity' };
}

/** FHIR's create/read/update/delete/execute code of an action, from its verb. */
function crude(action: string): 'C' | 'R' | 'U' | 'D' | 'E' {
  const verb = action.split('.').pop()!;
  if (/^(create|upload|issue|share|set|assign|start)$/.test(verb)) return 'C';
  if (/^(read|download|thumbnail|view|list|presence|export)$/.test(verb)) return 'R';
  if (/^(update|change|reset)$/.test(verb)) return 'U';
  if (/^(delete|cancel|revoke)$/.test(verb)) return 'D';
  return 'E';
}

function ref(kind: ParticipantKind | 'Encounter', id: string) {
  return { reference: `${kind}/${id}` };
}

/**
 * One audit entry as a FHIR R4 AuditEvent: the consultation as an `Encounter` entity, the actor as the
 * requesting agent and the subject as a `Patient`/`Practitioner`/`Device` entity; the chain position
 * and hashes travel as entity details so a FHIR consumer can match the entry to the verified chain.
 */
export function toAuditEvent(
  tenant: string,
  e: AuditRecord,
  kindOf: (userId: string) => ParticipantKind,
): Record<string, unknown> {
  const network = e.ip ? { network: { address: e.ip, type: '2' } } : {};
  const service = { who: { display: 'consult-service' }, requestor: false };
  // A sign-in (or sign-out) has no acting user yet: the person who signed in asked for it, and the
  // service authenticated them. Both are agents (DICOM's user authentication event names the user).
  const person = e.actorId ?? (isAuthentication(e.action) ? e.subjectId : undefined);
  const agents = person
    ? [{ who: ref(kindOf(person), person), requestor: true, ...network }, ...(e.actorId ? [] : [service])]
    : [service];
  const entity: Record<string, unknown>[] = [
    {
      what: { identifier: { system: 'urn:consult:audit-entry', value: e.id } },
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-entity-type', code: '4', display: 'Other' },
      detail: [
        { type: 'seq', valueString: String(e.seq) },
        { type: 'prev', valueString: e.prev },
        { type: 'hash', valueString: e.hash },
        ...(e.details ? [{ type: 'details', valueString: JSON.stringify(e.details) }] : []),
      ],
    },
  ];
  if (e.eventId)
    entity.push({
      what: ref('Encounter', e.eventId),
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-entity-type', code: '2', display: 'System Object' },
    });
  if (e.subjectId)
    entity.push({
      what: ref(kindOf(e.subjectId), e.subjectId),
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-entity-type', code: '1', display: 'Person' },
    });
  return {
    resourceType: 'AuditEvent',
    id: e.id,
    type: eventType(e.action),
    subtype: [{ system: ACTION_SYSTEM, code: e.action }],
    action: crude(e.action),
    recorded: e.createdAt.toISOString(),
    outcome: e.outcome === 'success' ? '0' : '4',
    agent: agents,
    source: {
      site: tenant,
      observer: { display: 'consult-service' },
      type: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/security-source-type',
          code: '4',
          display: 'Application Server',
        },
      ],
    },
    entity,
  };
}

/** A FHIR R4 Bundle (type collection) of AuditEvents. */
export function auditBundle(events: Record<string, unknown>[], next?: string): Record<string, unknown> {
  return {
    resourceType: 'Bundle',
    type: 'collection',
    timestamp: new Date().toISOString(),
    ...(next ? { link: [{ relation: 'next', url: next }] } : {}),
    entry: events.map((resource) => ({ fullUrl: `urn:uuid:${resource.id as string}`, resource })),
  };
}
