import { randomInt } from 'node:crypto';
import { AppError } from '../../kernel/errors.js';
import { type LoginCodeRepository, type LoginCodeRecord } from '../../data/repositories/login-code.repository.js';
import { type CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { Principal } from '../../kernel/principal.js';
import { randomSecret, sha256 } from '../../kernel/secrets.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { SessionService } from './session.service.js';
import type { LoginResponse } from './sign-in-context.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SignInContext } from './sign-in-context.js';
import type { QrRenderer } from '../../qr/qr-renderer.js';

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;
const MAX_EXTENSIONS = 5;
/** Expired codes are kept a day (so late polls still read `login_code_expired`), then purged. */
const PURGE_AFTER_MS = 24 * 60 * 60 * 1000;
/** Seconds a polling client should wait between polls (sent as Retry-After on `login_code_pending`). */
export const POLL_INTERVAL_SECONDS = 2;

export interface GeneratedLoginCode {
  code: string;
  pollSecret: string;
  expiresAt: string;
  pollIntervalSeconds: number;
  approveUrl: string;
  /** PNG data URL of the QR code encoding `approveUrl`. */
  qrCode: string;
}

/** What the approval page shows a signed-in user before they approve or refuse (never the poll secret). */
export interface LoginCodeInfo {
  code: string;
  status: 'pending' | 'approved' | 'redeemed' | 'refused' | 'expired';
  deviceName?: string;
  requestedFrom: { ip?: string; userAgent?: string };
  requestedAt?: string;
  expiresAt: string;
}

export interface LoginCodeServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  /** Per-tenant LoginCodeRepository (a factory of the composition root). */
  loginCodes(tenant: string): LoginCodeRepository;
  rules: SecurityRulesService;
  sessions: SessionService;
  audit: AuditService;
  /** Renders the QR image off the main thread (./qr-renderer.ts). */
  qr: Pick<QrRenderer, 'render'>;
}

/**
 * Renders in flight at once for one client address and for one tenant: creating a login code is
 * unauthenticated, so these bounds (not the caller's good will) keep the renderer's queue short.
 */
export const QR_RENDERS_PER_ADDRESS = 4;
export const QR_RENDERS_PER_TENANT = 16;

/**
 * QR login: a device creates a code (pending) and shows it as a QR image, a signed-in web user approves
 * it (approved), and the device's poll redeems it once into a session of the approver (redeemed).
 * Codes expire by time; only the holder of the poll secret can extend or redeem.
 */
export class LoginCodeService {
  constructor(private readonly deps: LoginCodeServiceDeps) {}

  /**
   * `approvePageUrl` is the approval page the QR code points at (the service's own `/login/approve` or
   * the tenant's web app, src/core/tenants/web-app-urls.ts); the code is added as its `code` query parameter.
   */
  async create(
    tenant: string,
    input: { deviceName?: string },
    approvePageUrl: string,
    ctx: { ip?: string; userAgent?: string } = {},
  ): Promise<GeneratedLoginCode> {
    const ttl = (await this.deps.rules.get(tenant)).loginCodeTtlSeconds;
    const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    const pollSecret = randomSecret(24);
    const expiresAt = new Date(Date.now() + ttl * 1000);
    const requestedFrom = {
      ...(ctx.ip ? { ip: ctx.ip } : {}),
      ...(ctx.userAgent ? { userAgent: ctx.userAgent.slice(0, 300) } : {}),
    };
    await this.repo(tenant).create({
      code,
      pollSecretHash: sha256(pollSecret),
      deviceName: input.deviceName,
      requestedFrom,
      expiresAt,
    });
    await this.repo(tenant).purgeExpired(new Date(Date.now() - PURGE_AFTER_MS));
    const url = new URL(approvePageUrl);
    url.searchParams.set('code', code);
    const approveUrl = url.href;
    const bounds = [
      { key: `t:${tenant}`, limit: QR_RENDERS_PER_TENANT },
      { key: `a:${tenant}:${ctx.ip ?? '-'}`, limit: QR_RENDERS_PER_ADDRESS },
    ];
    const qrCode = await this.deps.qr.render(approveUrl, { errorCorrectionLevel: 'M', margin: 1, width: 320 }, bounds);
    return {
      code,
      pollSecret,
      expiresAt: expiresAt.toISOString(),
      pollIntervalSeconds: POLL_INTERVAL_SECONDS,
      approveUrl,
      qrCode,
    };
  }

  async extend(
    tenant: string,
    input: { code: string; pollSecret: string },
  ): Promise<{ code: string; expiresAt: string }> {
    const ttl = (await this.deps.rules.get(tenant)).loginCodeTtlSeconds;
    const now = new Date();
    const done = await this.repo(tenant).extend(
      input.code,
      sha256(input.pollSecret),
      new Date(now.getTime() + ttl * 1000),
      now,
      MAX_EXTENSIONS,
    );
    if (done) return { code: done.code, expiresAt: done.expiresAt.toISOString() };
    const c = await this.owned(tenant, input.code, input.pollSecret);
    if (c.extendedCount >= MAX_EXTENSIONS && c.status === 'pending' && c.expiresAt > now)
      throw new AppError('invalid_state', 'The login code cannot be extended any further');
    throw refusal(c, now);
  }

  /**
   * A signed-in user approves a pending code for themselves (not while impersonating). The approving
   * session and its permissions are recorded: the device's session is derived from it (never wider,
   * revoked with it). Approved with an identity-provider token, that session is the token's realm
   * session (`sid`); a token naming none cannot approve (nothing would end the device's session).
   */
  async approve(
    principal: Principal,
    code: string,
  ): Promise<{ code: string; status: 'approved'; deviceName?: string }> {
    if (principal.actorUserId) throw new AppError('forbidden', 'A login code cannot be approved while impersonating');
    if (!principal.sessionId && !principal.idpSid)
      throw new AppError(
        'forbidden',
        'A login code cannot be approved with a token that names no session (no sid): sign in to the service first',
      );
    const now = new Date();
    const by = {
      userId: principal.userId,
      ...(principal.sessionId ? { sessionId: principal.sessionId } : { idpSid: principal.idpSid }),
      permissions: [...principal.permissions].sort(),
    };
    const done = await this.repo(principal.tenant).approve(code, by, now);
    if (!done) {
      const c = await this.repo(principal.tenant).findByCode(code);
      if (!c) throw new AppError('login_code_not_found', 'No such login code');
      throw refusal(c, now);
    }
    await this.deps.audit.record(principal.tenant, {
      action: 'login_code.approve',
      outcome: 'success',
      actorId: principal.userId,
      subjectId: principal.userId,
      details: { deviceName: done.deviceName },
    });
    return { code, status: 'approved', ...(done.deviceName ? { deviceName: done.deviceName } : {}) };
  }

  /** The approval page's read: which device asks and the code's state (any signed-in user holding the code). */
  async info(principal: Principal, code: string): Promise<LoginCodeInfo> {
    const c = await this.repo(principal.tenant).findByCode(code);
    if (!c) throw new AppError('login_code_not_found', 'No such login code');
    const expired = c.expiresAt <= new Date() && c.status !== 'redeemed' && c.status !== 'refused';
    return {
      code: c.code,
      status: expired ? 'expired' : c.status,
      ...(c.deviceName ? { deviceName: c.deviceName } : {}),
      requestedFrom: {
        ...(c.requestedFrom?.ip ? { ip: c.requestedFrom.ip } : {}),
        ...(c.requestedFrom?.userAgent ? { userAgent: c.requestedFrom.userAgent } : {}),
      },
      ...(c.createdAt ? { requestedAt: c.createdAt.toISOString() } : {}),
      expiresAt: c.expiresAt.toISOString(),
    };
  }

  /** A signed-in user refuses a pending code: final; the device's poll answers `login_code_refused`. */
  async refuse(principal: Principal, code: string): Promise<{ code: string; status: 'refused'; deviceName?: string }> {
    const now = new Date();
    const done = await this.repo(principal.tenant).refuse(code, now);
    if (!done) {
      const c = await this.repo(principal.tenant).findByCode(code);
      if (!c) throw new AppError('login_code_not_found', 'No such login code');
      throw refusal(c, now);
    }
    await this.deps.audit.record(principal.tenant, {
      action: 'login_code.refuse',
      outcome: 'success',
      actorId: principal.actorUserId ?? principal.userId,
      subjectId: principal.userId,
      details: { deviceName: done.deviceName },
    });
    return { code, status: 'refused', ...(done.deviceName ? { deviceName: done.deviceName } : {}) };
  }

  /** The device's poll: `login_code_pending` until approved, then a session once; afterwards `login_code_used`. */
  async redeem(
    tenant: string,
    input: { code: string; pollSecret: string },
    ctx: SignInContext,
  ): Promise<LoginResponse> {
    const now = new Date();
    const redeem = () => this.repo(tenant).redeem(input.code, sha256(input.pollSecret), now);
    let done = await redeem();
    if (!done) {
      // Approved between the redemption's compare-and-set and this read: redeem again rather than refuse.
      const seen = await this.owned(tenant, input.code, input.pollSecret);
      if (seen.status === 'approved' && seen.expiresAt > now) done = await redeem();
      if (!done)
        throw refusal(seen.status === 'approved' ? await this.owned(tenant, input.code, input.pollSecret) : seen, now);
    }
    const user = await this.deps.credentials(tenant).findById(String(done.approvedBy));
    if (!user || user.status !== 'active')
      throw new AppError('invalid_credentials', 'The approving account is not active');
    if (!done.approvedPermissions || (!done.approvedSessionId && !done.approvedIdpSid))
      throw new AppError(
        'login_code_expired',
        'The login code was approved before approvals were tied to a session; create a new one',
      );
    const parent = {
      permissions: done.approvedPermissions,
      ...(done.approvedSessionId ? { sessionId: done.approvedSessionId } : {}),
      ...(done.approvedIdpSid ? { realmSid: done.approvedIdpSid } : {}),
    };
    return this.deps.sessions.issueSignedIn(
      { tenant, user, method: 'qr', parent, ip: ctx.ip, userAgent: ctx.userAgent },
      { deviceName: done.deviceName },
    );
  }

  private async owned(tenant: string, code: string, pollSecret: string): Promise<LoginCodeRecord> {
    const c = await this.repo(tenant).findByCode(code);
    if (!c || c.pollSecretHash !== sha256(pollSecret))
      throw new AppError('login_code_not_found', 'No such login code for this poll secret');
    return c;
  }

  private repo(tenant: string): LoginCodeRepository {
    return this.deps.loginCodes(tenant);
  }
}

function refusal(c: LoginCodeRecord, now: Date): AppError {
  if (c.status === 'redeemed') return new AppError('login_code_used', 'The login code has already been used');
  if (c.status === 'refused')
    return new AppError('login_code_refused', 'The login code was refused by the user asked to approve it');
  if (c.expiresAt <= now) return new AppError('login_code_expired', 'The login code has expired');
  if (c.status === 'pending')
    return new AppError('login_code_pending', 'The login code has not been approved yet', {
      retryAfter: POLL_INTERVAL_SECONDS,
    });
  return new AppError('invalid_state', 'The login code has already been approved');
}
