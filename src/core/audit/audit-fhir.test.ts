import { describe, expect, it } from '@jest/globals';
import { toAuditEvent } from './audit-fhir.js';
import { fhirValidators } from '../../../test/support/fhir-schema.js';

const USER = 'a'.repeat(24);
const ADMIN = 'b'.repeat(24);
const entry = (over: Record<string, unknown>) =>
  ({
    seq: 7,
    id: 'c'.repeat(24),
    createdAt: new Date('2026-11-28T10:00:00Z'),
    prev: '0'.repeat(64),
    hash: '1'.repeat(64),
    outcome: 'success',
    ...over,
  }) as never;
const kindOf = () => 'Practitioner' as const;

describe('audit entries as FHIR R4 AuditEvents', () => {
  const fhir = fhirValidators();

  it('names the user who signed in as the requesting agent, the service as the agent that authenticated', () => {
    const ev = toAuditEvent(
      'acme',
      entry({ action: 'signin.success', subjectId: USER, ip: '203.0.113.9', details: { method: 'pin' } }),
      kindOf,
    );
    expect(fhir.auditEvent(ev) ? [] : fhir.auditEvent.errors).toEqual([]);
    expect(ev.agent).toEqual([
      { who: { reference: `Practitioner/${USER}` }, requestor: true, network: { address: '203.0.113.9', type: '2' } },
      { who: { display: 'consult-service' }, requestor: false },
    ]);
  });

  it('keeps the acting user as the only agent when there is one, and the service alone for an unknown user', () => {
    const acted = toAuditEvent('acme', entry({ action: 'role.assign', actorId: ADMIN, subjectId: USER }), kindOf);
    expect(acted.agent).toEqual([{ who: { reference: `Practitioner/${ADMIN}` }, requestor: true }]);
    const unknown = toAuditEvent('acme', entry({ action: 'signin.failure', outcome: 'failure' }), kindOf);
    expect(unknown.agent).toEqual([{ who: { display: 'consult-service' }, requestor: false }]);
    // A job's entry about a user (no person at a keyboard) stays the service's.
    const job = toAuditEvent('acme', entry({ action: 'telemetry.complete', subjectId: USER }), kindOf);
    expect(job.agent).toEqual([{ who: { display: 'consult-service' }, requestor: false }]);
  });
});
