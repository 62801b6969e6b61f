import type { EventRepository } from '../../data/repositories/event.repository.js';
import type { ConsentSettings, RecordingConsentAnswer } from '../../contracts/meeting.schema.js';
import type { AuditService } from '../audit/audit.service.js';
import { oid } from '../../kernel/object-id.js';

interface Deps {
  events: (tenant: string) => Pick<EventRepository, 'addRecordingConsent'>;
  /** TenantConfig `meetings` over the defaults (AdminService.meetingSettings). */
  meetingSettings: (
    tenant: string,
  ) => Promise<{ recordingConsent: ConsentSettings['policy']; recordingConsentTimeoutSeconds: number }>;
  audit: Pick<AuditService, 'record'>;
}

/**
 * Recording consent as the meeting actor stores it (decision 910): the tenant's policy, and each
 * answer kept with the event (who, when, what was asked, the answer) and written to the audit trail.
 */
export class RecordingConsentService {
  constructor(private readonly deps: Deps) {}

  async settings(tenant: string): Promise<ConsentSettings> {
    const m = await this.deps.meetingSettings(tenant);
    return { policy: m.recordingConsent, timeoutSeconds: m.recordingConsentTimeoutSeconds };
  }

  /**
   * Stores the answer once per person and request, then audits it. The audit entry is written on every
   * call (a turn retried after a failure writes it again) so an answer is never left unaudited.
   */
  async record(tenant: string, eventId: string, a: RecordingConsentAnswer): Promise<void> {
    await this.deps.events(tenant).addRecordingConsent(oid(eventId, 'event_not_found'), {
      key: `${a.requestId}:${a.userId}`,
      ...a,
      userId: oid(a.userId, 'user_not_found'),
      requestedBy: /^[0-9a-f]{24}$/i.test(a.requestedBy) ? oid(a.requestedBy) : undefined,
      requestedAt: new Date(a.requestedAt),
      at: new Date(a.at),
    });
    await this.deps.audit.record(tenant, {
      action: 'recording.consent',
      outcome: 'success',
      actorId: a.userId,
      eventId,
      details: {
        requestId: a.requestId,
        consent: a.consent,
        question: a.question,
        ...(a.reason ? { reason: a.reason } : {}),
        policy: a.policy,
        role: a.role,
        tenantRole: a.tenantRole,
        requestedBy: a.requestedBy,
        late: a.late,
        implicit: a.implicit,
      },
    });
  }
}
