import { AppError } from '../../kernel/errors.js';
import { type OfflineTokenRepository } from '../../data/repositories/offline-token.repository.js';
import { type CredentialRepository } from '../../data/repositories/credential.repository.js';
import { OFFLINE_PERMISSIONS, intersect } from '../../auth/authorizer.js';
import type { Principal } from '../../kernel/principal.js';
import type { Permission } from '../../kernel/permissions.js';
import { randomSecret, sha256 } from '../../kernel/secrets.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { SessionService } from './session.service.js';
import type { LoginResponse } from './sign-in-context.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SignInContext } from './sign-in.service.js';

export interface IssuedOfflineToken {
  id: string;
  token: string;
  purpose: string;
  permissions: Permission[];
  expiresAt: string;
}

export interface OfflineTokenServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  /** Per-tenant OfflineTokenRepository (a factory of the composition root). */
  offlineTokens(tenant: string): OfflineTokenRepository;
  rules: SecurityRulesService;
  sessions: SessionService;
  audit: AuditService;
}

/**
 * Offline tokens: issued for a stated purpose to a signed-in user, stored as a hash, carrying at most
 * the read-only OFFLINE_PERMISSIONS, revocable (revoking also ends the sessions opened with it).
 */
export class OfflineTokenService {
  constructor(private readonly deps: OfflineTokenServiceDeps) {}

  async issue(principal: Principal, purpose: string): Promise<IssuedOfflineToken> {
    if (principal.actorUserId || principal.purpose)
      throw new AppError('forbidden', 'Offline tokens cannot be issued from an impersonation or offline session');
    const permissions = intersect(principal.permissions, OFFLINE_PERMISSIONS).sort();
    const token = `ot_${randomSecret(32)}`;
    const days = (await this.deps.rules.get(principal.tenant)).session.offlineTokenTtlDays;
    // A derived session (QR approval) passes its own end on: the token dies with it, or expires with it.
    const issuer = principal.sessionId ? await this.deps.sessions.find(principal.tenant, principal.sessionId) : null;
    const parentSessionId = issuer?.parentSessionId ? issuer._id : undefined;
    const ownExpiry = Date.now() + days * 86_400_000;
    const expiresAt = new Date(parentSessionId && issuer ? Math.min(ownExpiry, issuer.expiresAt.getTime()) : ownExpiry);
    const id = await this.repo(principal.tenant).create({
      tokenHash: sha256(token),
      userId: principal.userId,
      purpose,
      permissions,
      expiresAt,
      ...(parentSessionId ? { parentSessionId } : {}),
    });
    await this.deps.audit.record(principal.tenant, {
      action: 'offline_token.issue',
      outcome: 'success',
      actorId: principal.userId,
      subjectId: principal.userId,
      details: { id, purpose },
    });
    return { id, token, purpose, permissions, expiresAt: expiresAt.toISOString() };
  }

  async login(tenant: string, token: string, ctx: SignInContext): Promise<LoginResponse> {
    const record = await this.repo(tenant).findLiveByHash(sha256(token), new Date());
    const user = record ? await this.deps.credentials(tenant).findById(String(record.userId)) : null;
    if (!record || !user || user.status !== 'active') {
      await this.deps.audit.record(tenant, {
        action: 'signin.failure',
        outcome: 'failure',
        ip: ctx.ip,
        details: { method: 'offline' },
      });
      throw new AppError('invalid_credentials', 'The offline token is not valid');
    }
    return this.deps.sessions.issueSignedIn(
      {
        tenant,
        user,
        method: 'offline',
        purpose: record.purpose,
        offlineTokenId: record._id.toString(),
        ip: ctx.ip,
        userAgent: ctx.userAgent,
      },
      { purpose: record.purpose },
    );
  }

  async revoke(principal: Principal, id: string): Promise<{ id: string; revoked: true; sessionsRevoked: number }> {
    if (!(await this.repo(principal.tenant).revoke(id, principal.userId)))
      throw new AppError('not_found', 'No live offline token with this id');
    const sessions = await this.deps.sessions.revoke(principal.tenant, { offlineTokenId: id }, 'offline_token_revoked');
    await this.deps.audit.record(principal.tenant, {
      action: 'offline_token.revoke',
      outcome: 'success',
      actorId: principal.userId,
      subjectId: principal.userId,
      details: { id },
    });
    return { id, revoked: true, sessionsRevoked: sessions.length };
  }

  private repo(tenant: string): OfflineTokenRepository {
    return this.deps.offlineTokens(tenant);
  }
}
