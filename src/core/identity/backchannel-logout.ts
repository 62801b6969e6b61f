import type { JWTPayload } from 'jose';
import { AppError, isAppError } from '../../kernel/errors.js';
import type { CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { UsedLogoutTokensStore } from '../../data/stores/used-logout-tokens.store.js';
import type { SessionService } from './session.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { OidcRealms } from '../../auth/oidc-realms.js';
import { realmSid } from '../../auth/access-token-verifier.js';

/** The `events` member that makes a JWT a logout token (OpenID Connect Back-Channel Logout 1.0, 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export interface BackchannelLogoutDeps {
  realms: Pick<OidcRealms, 'verifyLogoutToken'>;
  sessions: Pick<SessionService, 'endRealmSession' | 'endUser'>;
  audit: Pick<AuditService, 'record'>;
  /** The `jti`s already received (replay protection). */
  usedTokens: UsedLogoutTokensStore;
  /** The tenant's credential repository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  /** Logout tokens issued longer ago are refused; a used `jti` is remembered this long (plus tolerance). */
  maxAgeSeconds: number;
}

/**
 * Receives the realm's back-channel logout (an external IdP such as Keycloak posts a signed logout
 * token when a user signs out there, or an administrator ends the user's sessions). A token naming a
 * realm session (`sid`) ends that realm session and the service sessions opened from it; a token naming
 * only the user (`sub`) ends all of the user's sessions and refuses the user's identity-provider tokens
 * issued so far. Either way the same revocation markers as a sign-out are written, so the IdP's tokens
 * stop working on REST, GraphQL and open hub sockets at once.
 */
export class BackchannelLogout {
  constructor(private readonly deps: BackchannelLogoutDeps) {}

  async receive(tenant: string, logoutToken: string, ip?: string): Promise<void> {
    const claims = await this.verify(tenant, logoutToken);
    const sid = realmSid(claims);
    const sub = typeof claims.sub === 'string' && claims.sub.length > 0 ? claims.sub : undefined;
    // Replay protection: a jti is accepted once while the token could still be accepted.
    const fresh = await this.deps.usedTokens.claim(tenant, String(claims.jti), this.deps.maxAgeSeconds + 120);
    if (!fresh) throw invalid('The logout token was already used');
    let userId = '';
    let ended: string[];
    try {
      const user = sub ? await this.deps.credentials(tenant).findBySubject(sub) : null;
      userId = user ? user._id.toString() : '';
      if (sid)
        ended = (await this.deps.sessions.endRealmSession(tenant, userId, sid, 'backchannel_logout')).map((s) => s._id);
      else if (user)
        ended = (await this.deps.sessions.endUser(tenant, { id: userId, subject: sub! }, 'backchannel_logout')).map(
          (s) => s._id,
        );
      else ended = []; // a subject unknown to this tenant has nothing to end here
    } catch (e) {
      // Not applied: the IdP may retry with the same token.
      await this.deps.usedTokens.release(tenant, String(claims.jti)).catch(() => undefined);
      throw e;
    }
    await this.deps.audit.record(tenant, {
      action: 'logout',
      outcome: 'success',
      ...(userId ? { subjectId: userId } : {}),
      ip,
      details: { via: 'backchannel', sessions: ended, ...(sid ? { realmSession: sid } : {}) },
    });
  }

  private async verify(tenant: string, token: string): Promise<JWTPayload> {
    let claims: JWTPayload;
    try {
      claims = await this.deps.realms.verifyLogoutToken(tenant, token, this.deps.maxAgeSeconds);
    } catch (e) {
      // The realm being unreachable is ours to report (503, retry), not the token's fault.
      if (isAppError(e) && e.code === 'service_unavailable') throw e;
      throw invalid('The logout token cannot be verified', e);
    }
    const events = claims.events;
    if (!events || typeof events !== 'object' || Array.isArray(events) || !(BACKCHANNEL_LOGOUT_EVENT in events))
      throw invalid('The logout token has no back-channel logout event');
    const event = (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT];
    if (!event || typeof event !== 'object' || Array.isArray(event))
      throw invalid('The back-channel logout event must be a JSON object');
    if ('nonce' in claims) throw invalid('A logout token must not carry a nonce');
    if (!realmSid(claims) && !(typeof claims.sub === 'string' && claims.sub.length > 0))
      throw invalid('The logout token names neither a session (sid) nor a subject (sub)');
    if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 200)
      throw invalid('The logout token has no usable jti');
    return claims;
  }
}

function invalid(message: string, cause?: unknown): AppError {
  return new AppError('logout_token_invalid', message, cause === undefined ? {} : { cause });
}
