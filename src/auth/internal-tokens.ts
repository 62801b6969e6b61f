import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { AppError } from '../kernel/errors.js';
import { SIGNING_ALG, type SigningKeys } from './signing-keys.js';

/** Claims of an internal access token (docs/auth.md "Token formats"). */
export interface InternalClaims {
  sub: string;
  tenant: string;
  role: string;
  perms: string[];
  sid: string;
  preferred_username: string;
  /** Impersonation: the user id of who acts for `sub`. */
  act?: { sub: string };
  /** Offline-token sessions: the stated purpose. */
  purpose?: string;
}

export interface InternalTokensDeps {
  keys: SigningKeys;
  issuer: string;
  audience: string;
}

/** Issues and verifies the service's own short-lived access tokens (ES256, `kid` of the rotating key). */
export class InternalTokens {
  constructor(private readonly deps: InternalTokensDeps) {}

  get issuer(): string {
    return this.deps.issuer;
  }

  async issue(claims: InternalClaims, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
    const { kid, key } = await this.deps.keys.current();
    const now = Math.floor(Date.now() / 1000);
    const { sub, ...rest } = claims;
    const token = await new SignJWT({ ...rest })
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'at+jwt' })
      .setIssuer(this.deps.issuer)
      .setAudience(this.deps.audience)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setJti(crypto.randomUUID())
      .sign(key);
    return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
  }

  /** Verifies signature (ES256 only), issuer, audience and expiry; maps failures to coded 401s. */
  async verify(token: string): Promise<InternalClaims & JWTPayload> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = await this.deps.keys.publicKey(header.kid);
          if (!key) throw new AppError('token_invalid', 'Unknown signing key');
          return key;
        },
        {
          issuer: this.deps.issuer,
          audience: this.deps.audience,
          algorithms: [SIGNING_ALG],
          requiredClaims: ['sub', 'exp', 'sid'],
        },
      );
      return assertClaims(payload);
    } catch (e) {
      throw mapJoseError(e);
    }
  }
}

function assertClaims(p: JWTPayload): InternalClaims & JWTPayload {
  const ok =
    typeof p.sub === 'string' &&
    typeof p.tenant === 'string' &&
    typeof p.role === 'string' &&
    typeof p.sid === 'string' &&
    Array.isArray(p.perms);
  if (!ok) throw new AppError('token_invalid', 'Token claims are incomplete');
  return p as InternalClaims & JWTPayload;
}

/** jose errors -> stable codes, without echoing token contents. */
export function mapJoseError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  if (e instanceof joseErrors.JWTExpired) return new AppError('token_expired', 'The access token has expired');
  if (e instanceof joseErrors.JWTClaimValidationFailed)
    return new AppError('token_invalid', `Token claim '${e.claim}' is not acceptable`);
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return new AppError('token_invalid', 'Token algorithm not allowed');
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return new AppError('token_invalid', 'Token signature is invalid');
  if (e instanceof joseErrors.JOSEError)
    return new AppError('token_invalid', 'Token is malformed or cannot be verified');
  return new AppError('token_invalid', 'Token cannot be verified', { cause: e });
}
