import { AppError } from '../../kernel/errors.js';
import type {
  AccountRecord,
  CredentialRepository,
  SecurityRules,
} from '../../data/repositories/credential.repository.js';
import type { Principal } from '../../kernel/principal.js';
import type { PinLockedPush, SecurityAlertPush } from '../../contracts/pushes.js';
import { decoyHash, slowHash, slowVerify } from '../../kernel/secrets.js';
import { addressKey } from '../../kernel/address-key.js';
import { pinWeakness } from './pin-rules.js';
import type { PinAttemptsStore } from '../../data/stores/pin-attempts.store.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { SessionService } from './session.service.js';
import type { LoginResponse } from './sign-in-context.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SignInContext } from './sign-in-context.js';

export interface PinServiceDeps {
  /** Per-tenant CredentialRepository (a factory of the composition root). */
  credentials(tenant: string): CredentialRepository;
  /** Guesses, per-source locks and the day's budget of each account, shared by every node. */
  attempts: PinAttemptsStore;
  rules: SecurityRulesService;
  sessions: SessionService;
  audit: AuditService;
  /** Tells the user's signed-in devices that PIN sign-in was locked (hub push `pinLocked`). */
  notifyLocked?(tenant: string, userId: string, push: PinLockedPush): void;
  /** Told each time a quick unlock runs scrypt (metric pin_checks_total; unknown accounts included). */
  onPinCheck?: () => void;
  /** Alerts the tenant's administrators: an account's PIN sign-in was hard-locked (hub push `securityAlert`); never rejects. */
  alertAdmins?(tenant: string, push: SecurityAlertPush): Promise<void>;
}

/** Unknown users and users without a PIN cost the same scrypt as a real check. */
const decoy = decoyHash;

/**
 * Device PIN: scrypt-hashed, checked against the tenant PIN policy and history. Guessing is bounded per
 * account and client address with progressive locks, and per account by a daily budget that ends in a
 * hard lock (docs/decisions/131). Counters live in Redis so every node sees them.
 */
export class PinService {
  constructor(private readonly deps: PinServiceDeps) {
    void decoy();
  }

  /**
   * Quick unlock: username + PIN -> session. Unknown, inactive and PIN-less accounts go through the same
   * lockout and the same scrypt work as a wrong PIN, so neither the answer nor its timing tells them apart.
   */
  async unlock(tenant: string, input: { username: string; pin: string }, ctx: SignInContext): Promise<LoginResponse> {
    const rules = await this.deps.rules.get(tenant);
    const user = await this.creds(tenant).findByUsername(input.username);
    const username = input.username.toLowerCase().trim();
    const source = ctx.ip ? addressKey(ctx.ip) : 'unknown';
    const reservation = await this.deps.attempts.reserve(tenant, username, source, rules.lockout);
    if (reservation.kind !== 'ok') throw lockedError(reservation.kind, reservation.retryAfter);
    const usable = Boolean(user && user.status === 'active' && user.pinHash);
    const matches = await slowVerify(input.pin, usable ? user!.pinHash : await decoy(), this.deps.onPinCheck);
    if (!usable || !matches) return this.fail(tenant, user, username, source, reservation, rules, ctx);
    await this.deps.attempts.succeed(tenant, username, source);
    return this.deps.sessions.issueSignedIn({
      tenant,
      user: user!,
      method: 'pin',
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    });
  }

  /**
   * Sets (own) or resets (another user's, needs users:manage) a PIN. Without `newPin` an admin clears
   * the PIN so the user sets a new one. Clears failure counters and any lock.
   */
  async reset(
    principal: Principal,
    input: { userId?: string; newPin?: string },
  ): Promise<{ userId: string; hasPin: boolean }> {
    if (principal.actorUserId) throw new AppError('forbidden', 'PINs cannot be changed while impersonating');
    const targetId = input.userId ?? principal.userId;
    const self = targetId === principal.userId;
    if (!self && !principal.permissions.has('users:manage'))
      throw new AppError('permission_denied', "Resetting another user's PIN requires the 'users:manage' permission");
    if (self && !input.newPin)
      throw new AppError('validation_failed', 'newPin: required', {
        errors: [{ field: 'newPin', message: 'required' }],
      });
    const user = await this.creds(principal.tenant).findById(targetId);
    if (!user) throw new AppError('user_not_found', 'No such user');
    const rules = await this.deps.rules.get(principal.tenant);
    if (input.newPin) await this.setPin(principal.tenant, user, input.newPin, rules);
    else await this.creds(principal.tenant).setPin(targetId, null, user.pinHistory ?? []);
    await this.deps.attempts.clear(principal.tenant, user.username);
    await this.deps.audit.record(principal.tenant, {
      action: self ? 'pin.set' : 'pin.reset',
      outcome: 'success',
      actorId: principal.userId,
      subjectId: targetId,
    });
    return { userId: targetId, hasPin: Boolean(input.newPin) };
  }

  async hasPin(tenant: string, userId: string): Promise<boolean> {
    return Boolean((await this.creds(tenant).findById(userId))?.pinHash);
  }

  private async setPin(tenant: string, user: AccountRecord, pin: string, rules: SecurityRules): Promise<void> {
    const p = rules.pin;
    const problem =
      pin.length < p.minLength || pin.length > p.maxLength
        ? `must be ${p.minLength} to ${p.maxLength} characters`
        : p.digitsOnly && !/^\d+$/.test(pin)
          ? 'must contain digits only'
          : pinWeakness(pin);
    if (problem)
      throw new AppError('pin_policy_violation', `newPin: ${problem}`, {
        errors: [{ field: 'newPin', message: problem }],
      });
    const previous = [user.pinHash, ...(user.pinHistory ?? [])]
      .filter((h): h is string => Boolean(h))
      .slice(0, Math.max(p.historyCount, 1));
    for (const h of previous.slice(0, p.historyCount)) {
      if (await slowVerify(pin, h))
        throw new AppError('pin_policy_violation', `newPin: must differ from the last ${p.historyCount} PINs`, {
          errors: [{ field: 'newPin', message: 'recently used' }],
        });
    }
    await this.creds(tenant).setPin(user._id.toString(), await slowHash(pin), previous.slice(0, p.historyCount));
  }

  private async fail(
    tenant: string,
    user: AccountRecord | null,
    username: string,
    source: string,
    r: { fails: number; day: number },
    rules: SecurityRules,
    ctx: SignInContext,
  ): Promise<never> {
    const outcome = await this.deps.attempts.fail(tenant, username, source, r, rules.lockout);
    const subjectId = user?._id.toString();
    const reason = !user
      ? 'unknown_user'
      : user.status !== 'active'
        ? 'inactive'
        : !user.pinHash
          ? 'no_pin'
          : 'wrong_pin';
    if (outcome.kind === 'failed') {
      await this.deps.audit.record(tenant, {
        action: 'signin.failure',
        outcome: 'failure',
        subjectId,
        ip: ctx.ip,
        details: { method: 'pin', reason, attempts: r.fails, failuresToday: r.day },
      });
      throw new AppError('invalid_credentials', 'Invalid username or PIN');
    }
    const retryAfter = outcome.retryAfter;
    if (outcome.first) {
      const scope = outcome.kind === 'hard' ? 'account' : 'source';
      const details = {
        method: 'pin',
        reason,
        scope,
        failuresToday: r.day,
        lockoutSeconds: retryAfter,
        ...(outcome.kind === 'locked' ? { level: outcome.level } : {}),
      };
      await this.deps.audit.record(tenant, {
        action: 'signin.lockout',
        outcome: 'failure',
        subjectId,
        ip: ctx.ip,
        details,
      });
      const at = new Date().toISOString();
      if (user) this.deps.notifyLocked?.(tenant, user._id.toString(), { scope, retryAfter, at });
      // Unknown usernames lock like real ones (nothing tells them apart), but only a real account alerts.
      if (user && outcome.kind === 'hard')
        await this.deps.alertAdmins?.(tenant, {
          kind: 'pinLocked',
          userId: user._id.toString(),
          username: user.username,
          retryAfter,
          failuresToday: r.day,
          at,
        });
    }
    throw lockedError(outcome.kind, retryAfter);
  }

  private creds(tenant: string): CredentialRepository {
    return this.deps.credentials(tenant);
  }
}

/**
 * 423 with Retry-After: a locked source (this address, for a while) or a hard-locked account (every
 * address, until the lock ends or the PIN is set again). Either way the other sign-ins still work, and
 * the answer says so.
 */
function lockedError(kind: 'locked' | 'hard', retryAfter: number): AppError {
  return kind === 'locked'
    ? new AppError(
        'account_locked',
        'Too many failed PIN attempts from this address; try again later, or sign in with single sign-on or a QR code',
        { retryAfter },
      )
    : new AppError(
        'account_locked',
        'PIN sign-in is locked after too many failed attempts from several addresses. Single sign-on and QR code sign-in still work: sign in with either and set a new PIN (which ends the lock), or ask an administrator to reset it',
        { retryAfter },
      );
}
