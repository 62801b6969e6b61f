import { AppError } from '../../kernel/errors.js';
import { type CredentialRepository, type SecurityRules } from '../../data/repositories/credential.repository.js';
import type { Authorizer } from '../../auth/authorizer.js';
import type { OidcRealms } from '../../auth/oidc-realms.js';
import type { Principal } from '../../kernel/principal.js';
import type { Permission } from '../../kernel/permissions.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { SessionService } from './session.service.js';
import type { AuditService } from '../audit/audit.service.js';
import { auditEntry } from '../audit/audit-by.js';
import type { PinService } from './pin.service.js';
import type { Revocations } from '../../auth/revocations.js';
import type { WebAppPages } from '../tenants/web-app-urls.js';
import type { SessionRecord } from '../../data/repositories/session.repository.js';

export interface Me {
  user: { id: string; username: string; displayName: string; email?: string; role: string; kind: string };
  tenant: string;
  permissions: Permission[];
  scheme: Principal['scheme'];
  sessionId?: string;
  impersonatedBy?: string;
  purpose?: string;
}

export interface OrgInfo {
  tenant: string;
  displayName: string;
  /** `redirectUri`: where the realm sends the browser back, the tenant's web app or the service's page (decision 330). */
  realm: { issuer: string; clientId: string; audience: string; scopes: string[]; redirectUri: string };
}

export interface AccountServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  authorizer: Authorizer;
  realms: OidcRealms;
  rules: SecurityRulesService;
  sessions: SessionService;
  audit: AuditService;
  pins: PinService;
  revocations: Pick<Revocations, 'announceRole'>;
}

/** Account queries and commands shared by REST and GraphQL: me, hasPin, security rules, org, logout, roles. */
export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  /** GraphQL `me`: the user and the permissions of this principal (capped for impersonation/offline). */
  async me(principal: Principal): Promise<Me> {
    const u = await this.creds(principal.tenant).findById(principal.userId);
    if (!u) throw new AppError('user_not_found', 'The signed-in user no longer exists');
    return {
      user: {
        id: principal.userId,
        username: u.username,
        displayName: u.displayName,
        role: u.role,
        kind: u.kind,
        ...(u.email ? { email: u.email } : {}),
      },
      tenant: principal.tenant,
      permissions: [...principal.permissions].sort(),
      scheme: principal.scheme,
      ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
      ...(principal.actorUserId ? { impersonatedBy: principal.actorUserId } : {}),
      ...(principal.purpose ? { purpose: principal.purpose } : {}),
    };
  }

  /** GraphQL `hasPin`. */
  hasPin(principal: Principal): Promise<boolean> {
    return this.deps.pins.hasPin(principal.tenant, principal.userId);
  }

  /** GraphQL `tenantSecurityRules`: PIN policy, lockout, session rules, login-code TTL. */
  securityRules(tenant: string): Promise<SecurityRules> {
    return this.deps.rules.get(tenant);
  }

  /** POST /api/account/org: what a client needs to start sign-in on this tenant (`pages`: src/core/tenants/web-app-urls.ts). */
  org(tenant: { name: string; displayName: string }, pages: Pick<WebAppPages, 'signInRedirectUri'>): OrgInfo {
    const r = this.deps.realms;
    return {
      tenant: tenant.name,
      displayName: tenant.displayName,
      realm: {
        issuer: r.issuerFor(tenant.name),
        clientId: r.clientId,
        audience: r.audience,
        scopes: ['openid', 'profile', 'email', 'api'],
        redirectUri: pages.signInRedirectUri,
      },
    };
  }

  /**
   * Logout: revokes the caller's session (its refresh token stops working, its tokens are refused and
   * the hub drops its sockets) and the realm session it came from. Presented with an identity-provider
   * token, the realm session of that token ends (all of the user's sessions when the token names none).
   * For another user it needs users:manage and ends every session of theirs, realm sessions included.
   */
  async logout(principal: Principal, userId: string, ip?: string): Promise<{ revokedSessions: number }> {
    const self = userId === principal.userId;
    if (!self && !principal.permissions.has('users:manage'))
      throw new AppError('permission_denied', "Logging out another user requires the 'users:manage' permission");
    const revoked = await this.signOut(principal, userId, self);
    await this.deps.audit.record(principal.tenant, {
      action: principal.actorUserId && self ? 'impersonation.end' : 'logout',
      outcome: 'success',
      actorId: principal.actorUserId ?? principal.userId,
      subjectId: userId,
      ip,
      details: { sessions: revoked.map((s) => s._id) },
    });
    return { revokedSessions: revoked.length };
  }

  private async signOut(principal: Principal, userId: string, self: boolean): Promise<SessionRecord[]> {
    const { tenant } = principal;
    const sessions = this.deps.sessions;
    if (self && principal.sessionId) return sessions.revoke(tenant, { ids: [principal.sessionId] }, 'logout');
    if (self && principal.idpSid) return sessions.endRealmSession(tenant, userId, principal.idpSid, 'logout');
    const user = await this.creds(tenant).findById(userId);
    return user ? sessions.endUser(tenant, { id: userId, subject: user.idpSubject }, 'logout') : [];
  }

  /** Tenant admins assign roles; nobody can hand out a role granting more than they hold. */
  async assignRole(principal: Principal, userId: string, role: string): Promise<{ userId: string; role: string }> {
    if (!(await this.deps.authorizer.roleExists(principal.tenant, role)))
      throw new AppError('validation_failed', `role: unknown role '${role}'`, {
        errors: [{ field: 'role', message: 'unknown role' }],
      });
    const granted = await this.deps.authorizer.permissionsOf(principal.tenant, role);
    const beyond = [...granted].filter((p) => !principal.permissions.has(p));
    if (beyond.length)
      throw new AppError('permission_denied', `The role grants permissions you do not hold: ${beyond.join(', ')}`);
    if (!(await this.creds(principal.tenant).setRole(userId, role)))
      throw new AppError('user_not_found', 'No such user');
    await this.deps.revocations.announceRole(principal.tenant, userId, role);
    await this.deps.audit.record(
      principal.tenant,
      auditEntry(principal, 'role.assign', { subjectId: userId, details: { role } }),
    );
    return { userId, role };
  }

  private creds(tenant: string): CredentialRepository {
    return this.deps.credentials(tenant);
  }
}
