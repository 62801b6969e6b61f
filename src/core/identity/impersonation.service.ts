import { AppError } from '../../kernel/errors.js';
import { type CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../kernel/principal.js';
import type { SessionService } from './session.service.js';
import type { LoginResponse } from './sign-in-context.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SignInContext } from './sign-in.service.js';

export interface ImpersonationServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  authorizer: Authorizer;
  sessions: SessionService;
  audit: AuditService;
}

/**
 * Support impersonation: a session for the target user whose token carries `act` (the impersonator)
 * and whose permissions are the intersection of both roles, so it never grants more than the
 * impersonator has. Same tenant only (the target is looked up in the caller's tenant database).
 */
export class ImpersonationService {
  constructor(private readonly deps: ImpersonationServiceDeps) {}

  async start(
    principal: Principal,
    target: { userId?: string; username?: string },
    ctx: SignInContext,
  ): Promise<LoginResponse> {
    const tenant = principal.tenant;
    try {
      if (principal.actorUserId) throw new AppError('forbidden', 'Impersonation cannot be chained');
      const creds = this.deps.credentials(tenant);
      const [actor, user] = await Promise.all([
        creds.findById(principal.userId),
        target.userId ? creds.findById(target.userId) : creds.findByUsername(target.username ?? ''),
      ]);
      if (!actor) throw new AppError('unauthenticated', 'The impersonating account no longer exists');
      if (!user || user.status !== 'active') throw new AppError('user_not_found', 'No such active user in this tenant');
      if (user._id.toString() === actor._id.toString())
        throw new AppError('bad_request', 'You cannot impersonate yourself');
      const [targetPerms, actorPerms] = await Promise.all([
        this.deps.authorizer.permissionsOf(tenant, user.role),
        this.deps.authorizer.permissionsOf(tenant, actor.role),
      ]);
      if (targetPerms.has('tenant:admin') && !actorPerms.has('tenant:admin'))
        throw new AppError('permission_denied', 'Only a tenant administrator may impersonate an administrator');
      const parent = {
        permissions: [...principal.permissions],
        ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
      };
      const session = await this.deps.sessions.start({
        tenant,
        user,
        actor,
        method: 'impersonation',
        parent,
        ip: ctx.ip,
        userAgent: ctx.userAgent,
      });
      await this.deps.audit.record(tenant, {
        action: 'impersonation.start',
        outcome: 'success',
        actorId: principal.userId,
        subjectId: session.user.id,
        ip: ctx.ip,
        details: { sessionId: session.sessionId },
      });
      return session;
    } catch (e) {
      await this.deps.audit.record(tenant, {
        action: 'impersonation.start',
        outcome: 'failure',
        actorId: principal.userId,
        ip: ctx.ip,
        details: { target, code: (e as AppError).code },
      });
      throw e;
    }
  }
}
