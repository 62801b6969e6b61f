import { AppError } from '../../kernel/errors.js';
import { type CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { OidcRealms } from '../../auth/oidc-realms.js';
import type { AccessTokenVerifier } from '../../auth/access-token-verifier.js';
import type { SessionService } from './session.service.js';
import type { LoginResponse } from './sign-in-context.js';
import type { AuditService } from '../audit/audit.service.js';
import type { LoginCodeService } from './login-code.service.js';
import type { PinService } from './pin.service.js';
import type { SignInContext } from './sign-in-context.js';

export type { SignInContext } from './sign-in-context.js';

/** LoginRequest, by method (validated by the route's zod schema). */
export type LoginInput =
  | { method: 'code'; callbackUrl: string; codeVerifier: string; state?: string }
  | { method: 'qr'; code: string; pollSecret: string }
  | { method: 'pin'; username: string; pin: string };

export interface SignInServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  realms: OidcRealms;
  verifier: AccessTokenVerifier;
  sessions: SessionService;
  audit: AuditService;
  loginCodes: LoginCodeService;
  pins: PinService;
}

/** POST /api/account/login: one entry, three methods, every outcome audited. */
export class SignInService {
  constructor(private readonly deps: SignInServiceDeps) {}

  login(tenant: string, input: LoginInput, ctx: SignInContext): Promise<LoginResponse> {
    switch (input.method) {
      case 'code':
        return this.codeExchange(tenant, input, ctx);
      case 'qr':
        return this.deps.loginCodes.redeem(tenant, input, ctx);
      case 'pin':
        return this.deps.pins.unlock(tenant, input, ctx);
    }
  }

  /**
   * Authorization code + PKCE: the service (a confidential client of the tenant's realm) exchanges the
   * code, verifies the realm's access token like any IdP token, and opens an internal session.
   */
  private async codeExchange(
    tenant: string,
    input: Extract<LoginInput, { method: 'code' }>,
    ctx: SignInContext,
  ): Promise<LoginResponse> {
    try {
      const { accessToken } = await this.deps.realms.exchangeCode(
        tenant,
        new URL(input.callbackUrl),
        input.codeVerifier,
        input.state,
      );
      const principal = await this.deps.verifier.verify(tenant, accessToken);
      const user = await this.deps.credentials(tenant).findById(principal.userId);
      if (!user) throw new AppError('invalid_credentials', 'The signed-in account is not a user of this tenant');
      return await this.deps.sessions.issueSignedIn({
        tenant,
        user,
        method: 'oidc',
        idpSid: principal.idpSid,
        ip: ctx.ip,
        userAgent: ctx.userAgent,
      });
    } catch (e) {
      await this.deps.audit.record(tenant, {
        action: 'signin.failure',
        outcome: 'failure',
        ip: ctx.ip,
        details: { method: 'oidc', code: (e as AppError).code },
      });
      throw e;
    }
  }
}
