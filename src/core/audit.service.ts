import { type AuditRepository, type AuditEntry, type AuditRecord } from '../data/repositories/audit.repository.js';

/** Audit actions written by the auth services; other capabilities add their own names. */
export type AuditAction =
  | 'signin.success'
  | 'signin.failure'
  | 'signin.lockout'
  | 'logout'
  | 'session.reuse_detected'
  | 'impersonation.start'
  | 'impersonation.end'
  | 'pin.reset'
  | 'pin.set'
  | 'offline_token.issue'
  | 'offline_token.revoke'
  | 'login_code.approve'
  | 'login_code.refuse'
  | 'role.assign'
  | (string & {});

/** Writes the tenant's security audit trail; awaited so a sign-in is never unrecorded. */
export class AuditService {
  constructor(private readonly deps: { audits(tenant: string): AuditRepository }) {}

  async record(tenant: string, entry: AuditEntry & { action: AuditAction }): Promise<void> {
    await this.deps.audits(tenant).append(entry);
  }

  list(tenant: string, filter: { action?: string; subjectId?: string }, limit?: number): Promise<AuditRecord[]> {
    return this.deps.audits(tenant).list(filter, limit);
  }
}
