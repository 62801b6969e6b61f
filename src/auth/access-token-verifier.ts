import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { AppError } from '../kernel/errors.js';
import { type CredentialRepository, type AccountRecord } from '../data/repositories/credential.repository.js';
import type { InternalTokens } from './internal-tokens.js';
import type { OidcRealms } from './oidc-realms.js';
import type { Revocations } from './revocations.js';
import type { Authorizer } from './authorizer.js';
import { isPermission, type Permission } from '../kernel/permissions.js';
import type { Principal } from '../kernel/principal.js';

export interface AccessTokenVerifierDeps {
  internal: InternalTokens;
  realms: OidcRealms;
  revocations: Revocations;
  authorizer: Authorizer;
  /** The tenant's credential repository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  /** Identity-provider tokens living longer than this are refused (revocation markers live this long). */
  idpTokenMaxLifetimeSeconds: number;
  /** First sign-in through an external identity provider: binds a waiting account to the token's subject. */
  bindOnFirstSignIn?(tenant: string, claims: JWTPayload): Promise<AccountRecord | null>;
  /** How many checked signatures a node keeps, and how long each (defaults: 2,000; 30 s). */
  signatureCache?: { max?: number; ttlMs?: number; now?: () => number };
}

/**
 * The policy selector: one entry point for REST, GraphQL and the hub handshake. The token's (unverified)
 * issuer picks the scheme; the chosen scheme then verifies everything, including that the token's
 * tenant is the tenant of the host it is presented on.
 */
export class AccessTokenVerifier {
  /** Signatures already checked (decision 1149): what is cached is only what the signed bytes prove. */
  private readonly signed: VerifiedSignatures;

  constructor(private readonly deps: AccessTokenVerifierDeps) {
    this.signed = new VerifiedSignatures(deps.signatureCache);
  }

  async verify(tenant: string, token: string): Promise<Principal> {
    const { iss, sid } = peek(token);
    if (iss === this.deps.internal.issuer) return this.internal(tenant, token, sid);
    const realmTenant = this.deps.realms.tenantOfIssuer(iss);
    if (!realmTenant) throw new AppError('token_invalid', 'Token issuer is not trusted');
    if (realmTenant !== tenant) throw new AppError('wrong_tenant', 'The token was issued for another tenant');
    return this.idp(tenant, await this.signed.check(token, () => this.deps.realms.verify(tenant, token)));
  }

  /**
   * The session's revocation is read while the signature is checked (off the event loop): a handshake or
   * request waits for one of them, not both in turn. The read is of the session the token names; it only
   * counts once the signature proved the name (`sid` is part of the signed payload).
   */
  private async internal(tenant: string, token: string, peekedSid: string | undefined): Promise<Principal> {
    // The check's refusal as a value: a read started for a token whose signature then fails is not awaited.
    const refusal = (sessionId: string) =>
      this.deps.revocations.check({ tenant, sessionId }).then(
        () => undefined,
        (e: unknown) => e,
      );
    const early = peekedSid === undefined ? undefined : refusal(peekedSid);
    const c = await this.signed.check(token, () => this.deps.internal.verify(token));
    if (c.tenant !== tenant) throw new AppError('wrong_tenant', 'The token was issued for another tenant');
    const refused = await (c.sid === peekedSid ? early : refusal(c.sid));
    if (refused !== undefined) throw refused;
    return {
      tenant,
      userId: c.sub,
      username: c.preferred_username,
      role: c.role,
      scheme: 'internal',
      sessionId: c.sid,
      expiresAt: Number(c.exp) * 1000,
      ...(typeof c.iat === 'number' ? { issuedAt: c.iat } : {}),
      permissions: permissionSet(c.perms),
      ...(c.act?.sub ? { actorUserId: c.act.sub } : {}),
      ...(c.purpose ? { purpose: c.purpose } : {}),
      ...(typeof c.name === 'string' ? { displayName: c.name, kind: c.kind === 'device' ? 'device' : 'person' } : {}),
    };
  }

  /**
   * Identity-provider tokens meet the same revocation state as internal ones: their realm session
   * (`sid`, or Keycloak's older `session_state`) and the user's not-before time (an admin's sign-out).
   */
  private async idp(tenant: string, claims: JWTPayload): Promise<Principal> {
    const iat = typeof claims.iat === 'number' ? claims.iat : undefined;
    if (iat === undefined || Number(claims.exp) - iat > this.deps.idpTokenMaxLifetimeSeconds) {
      throw new AppError('token_invalid', 'Identity-provider token has no issue time or lives longer than accepted');
    }
    const user =
      (await this.deps.credentials(tenant).findBySubject(String(claims.sub))) ??
      (await this.deps.bindOnFirstSignIn?.(tenant, claims));
    if (!user || user.status !== 'active')
      throw new AppError('token_invalid', 'The token subject is not an active user of this tenant');
    const userId = user._id.toString();
    const idpSid = realmSid(claims);
    await this.deps.revocations.check({ tenant, idpSid, userId, issuedAt: iat });
    return {
      tenant,
      userId,
      username: user.username,
      role: user.role,
      scheme: 'idp',
      expiresAt: Number(claims.exp) * 1000,
      issuedAt: iat,
      permissions: await this.deps.authorizer.permissionsOf(tenant, user.role),
      ...(idpSid ? { idpSid } : {}),
      displayName: user.displayName,
      kind: user.kind,
    };
  }
}

/**
 * Tokens whose signature, issuer, audience and expiry were checked, by their exact string, so a client's
 * next request with the same token skips the ES256/RS256 check (about 250 us of a request on this
 * service's reference machine, decision 1149). An entry is only what the signed bytes prove: every
 * request still meets the tenant check and the revocation read. It is used until the token's `exp` (as the
 * full check would be) and for at most `ttlMs`, no longer than the signing-key caches already trust a
 * removed key; the oldest entries go first past `max`. A check that fails is never kept.
 */
export class VerifiedSignatures {
  private readonly entries = new Map<string, { payload: JWTPayload; until: number }>();
  private readonly max: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(o: { max?: number; ttlMs?: number; now?: () => number } = {}) {
    this.max = o.max ?? 2_000;
    this.ttlMs = o.ttlMs ?? 30_000;
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  async check<T extends JWTPayload>(token: string, verify: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(token);
    const now = this.now();
    if (hit) {
      if (now < hit.until) return hit.payload as T;
      this.entries.delete(token);
    }
    const payload = await verify();
    if (this.max > 0 && typeof payload.exp === 'number') {
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(token, { payload, until: Math.min(payload.exp * 1000, now + this.ttlMs) });
    }
    return payload;
  }
}

/** Permission sets already made, by their tokens' `perms` (a tenant's roles make a handful). */
const permissionSets = new Map<string, ReadonlySet<Permission>>();
/** Past this many distinct sets (custom roles, edited grants), new ones are made without being kept. */
const MAX_PERMISSION_SETS = 1024;

/**
 * The permission set of a token's `perms`: one shared, read-only set per distinct list, so the principals
 * of a thousand connections of one role hold one set (its strings included) instead of a thousand.
 */
export function permissionSet(perms: readonly string[]): ReadonlySet<Permission> {
  const key = perms.join(' ');
  let set = permissionSets.get(key);
  if (!set) {
    set = new Set<Permission>(perms.filter(isPermission));
    if (permissionSets.size < MAX_PERMISSION_SETS) permissionSets.set(key, set);
  }
  return set;
}

/** The realm session of an identity-provider token: `sid` (OIDC, Keycloak 18+) or `session_state`. */
export function realmSid(claims: JWTPayload): string | undefined {
  const sid = claims.sid ?? claims.session_state;
  return typeof sid === 'string' && sid.length > 0 && sid.length <= 200 ? sid : undefined;
}

/**
 * Reads `iss` (and `sid`, when a string) without trusting them, refusing unsigned (`alg: none`) and
 * malformed tokens up front.
 */
function peek(token: string): { iss: string; sid?: string } {
  let header: { alg?: string };
  let payload: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    payload = decodeJwt(token);
  } catch {
    throw new AppError('token_invalid', 'Token is malformed');
  }
  if (!header.alg || header.alg.toLowerCase() === 'none')
    throw new AppError('token_invalid', 'Unsigned tokens are not accepted');
  if (typeof payload.iss !== 'string') throw new AppError('token_invalid', 'Token has no issuer');
  return { iss: payload.iss, ...(typeof payload.sid === 'string' ? { sid: payload.sid } : {}) };
}
