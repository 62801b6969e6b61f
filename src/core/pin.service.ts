import type { Redis } from 'ioredis';
import { AppError } from './errors.js';
import type { TenantDb } from '../data/mongo.js';
import { CredentialRepository, type AccountRecord, type SecurityRules } from '../data/repositories/credential.repository.js';
import type { Principal } from '../auth/principal.js';
import { slowHash, slowVerify } from '../auth/secrets.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { SessionService, LoginResponse } from './session.service.js';
import type { AuditService } from './audit.service.js';
import type { SignInContext } from './sign-in.service.js';

export interface PinServiceDeps {
  tenantDb(tenant: string): TenantDb;
  redis: Redis;
  keys: { pinFailures(tenant: string, userId: string): string; pinLock(tenant: string, userId: string): string };
  rules: SecurityRulesService;
  sessions: SessionService;
  audit: AuditService;
}

/**
 * Device PIN: scrypt-hashed, checked against the tenant PIN policy and history, with lockout after the
 * tenant's maximum failures. Failure counters and locks live in Redis so every node sees them.
 */
export class PinService {
  constructor(private readonly deps: PinServiceDeps) {}

  /** Quick unlock: username + PIN -> session. Unknown users and wrong PINs fail alike. */
  async unlock(tenant: string, input: { username: string; pin: string }, ctx: SignInContext): Promise<LoginResponse> {
    const rules = await this.deps.rules.get(tenant);
    const user = await this.creds(tenant).findByUsername(input.username);
    if (!user || user.status !== 'active' || !user.pinHash) {
      await this.deps.audit.record(tenant, { action: 'signin.failure', outcome: 'failure', subjectId: user?._id.toString(), ip: ctx.ip, details: { method: 'pin', reason: user ? 'no_pin' : 'unknown_user' } });
      throw new AppError('invalid_credentials', 'Invalid username or PIN');
    }
    const userId = user._id.toString();
    await this.assertNotLocked(tenant, userId);
    const attempt = await this.reserveAttempt(tenant, userId, rules);
    if (!(await slowVerify(input.pin, user.pinHash))) await this.fail(tenant, userId, attempt, rules, ctx);
    await this.deps.redis.del(this.deps.keys.pinFailures(tenant, userId));
    const session = await this.deps.sessions.start({ tenant, user, method: 'pin', ip: ctx.ip, userAgent: ctx.userAgent });
    await this.deps.audit.record(tenant, { action: 'signin.success', outcome: 'success', subjectId: userId, ip: ctx.ip, details: { method: 'pin' } });
    return session;
  }

  /**
   * Sets (own) or resets (another user's, needs users:manage) a PIN. Without `newPin` an admin clears
   * the PIN so the user sets a new one. Clears failure counters and any lock.
   */
  async reset(principal: Principal, input: { userId?: string; newPin?: string }): Promise<{ userId: string; hasPin: boolean }> {
    if (principal.actorUserId) throw new AppError('forbidden', 'PINs cannot be changed while impersonating');
    const targetId = input.userId ?? principal.userId;
    const self = targetId === principal.userId;
    if (!self && !principal.permissions.has('users:manage')) throw new AppError('permission_denied', "Resetting another user's PIN requires the 'users:manage' permission");
    if (self && !input.newPin) throw new AppError('validation_failed', 'newPin: required', { errors: [{ field: 'newPin', message: 'required' }] });
    const user = await this.creds(principal.tenant).findById(targetId);
    if (!user) throw new AppError('user_not_found', 'No such user');
    const rules = await this.deps.rules.get(principal.tenant);
    if (input.newPin) await this.setPin(principal.tenant, user, input.newPin, rules);
    else await this.creds(principal.tenant).setPin(targetId, null, user.pinHistory ?? []);
    await this.deps.redis.del(this.deps.keys.pinFailures(principal.tenant, targetId), this.deps.keys.pinLock(principal.tenant, targetId));
    await this.deps.audit.record(principal.tenant, { action: self ? 'pin.set' : 'pin.reset', outcome: 'success', actorId: principal.userId, subjectId: targetId });
    return { userId: targetId, hasPin: Boolean(input.newPin) };
  }

  async hasPin(tenant: string, userId: string): Promise<boolean> {
    return Boolean((await this.creds(tenant).findById(userId))?.pinHash);
  }

  private async setPin(tenant: string, user: AccountRecord, pin: string, rules: SecurityRules): Promise<void> {
    const p = rules.pin;
    const problem = pin.length < p.minLength || pin.length > p.maxLength
      ? `must be ${p.minLength} to ${p.maxLength} characters`
      : p.digitsOnly && !/^\d+$/.test(pin) ? 'must contain digits only' : undefined;
    if (problem) throw new AppError('pin_policy_violation', `newPin: ${problem}`, { errors: [{ field: 'newPin', message: problem }] });
    const previous = [user.pinHash, ...(user.pinHistory ?? [])].filter((h): h is string => Boolean(h)).slice(0, Math.max(p.historyCount, 1));
    for (const h of previous.slice(0, p.historyCount)) {
      if (await slowVerify(pin, h)) throw new AppError('pin_policy_violation', `newPin: must differ from the last ${p.historyCount} PINs`, { errors: [{ field: 'newPin', message: 'recently used' }] });
    }
    await this.creds(tenant).setPin(user._id.toString(), await slowHash(pin), previous.slice(0, p.historyCount));
  }

  private async assertNotLocked(tenant: string, userId: string): Promise<void> {
    const ttl = await this.deps.redis.ttl(this.deps.keys.pinLock(tenant, userId));
    if (ttl > 0 || ttl === -1) throw new AppError('account_locked', 'Too many failed PIN attempts; try again later', { retryAfter: Math.max(ttl, 1) });
  }

  /**
   * Counts the attempt before the PIN is checked, so a concurrent burst cannot have more guesses
   * evaluated than the policy allows (attempts past the maximum are refused unchecked).
   */
  private async reserveAttempt(tenant: string, userId: string, rules: SecurityRules): Promise<number> {
    const { maxAttempts, lockoutSeconds } = rules.lockout;
    const key = this.deps.keys.pinFailures(tenant, userId);
    const [[, count]] = (await this.deps.redis.multi().incr(key).expire(key, lockoutSeconds).exec()) as [[null, number]];
    if (count > maxAttempts) throw new AppError('account_locked', 'Too many failed PIN attempts; try again later', { retryAfter: lockoutSeconds });
    return count;
  }

  private async fail(tenant: string, userId: string, count: number, rules: SecurityRules, ctx: SignInContext): Promise<never> {
    const { maxAttempts, lockoutSeconds } = rules.lockout;
    if (count >= maxAttempts) {
      // The failure counter is left to expire with the lock: deleting it here would let in-flight attempts start over.
      await this.deps.redis.set(this.deps.keys.pinLock(tenant, userId), '1', 'EX', lockoutSeconds);
      await this.deps.audit.record(tenant, { action: 'signin.lockout', outcome: 'failure', subjectId: userId, ip: ctx.ip, details: { method: 'pin', attempts: count, lockoutSeconds } });
      throw new AppError('account_locked', 'Too many failed PIN attempts; the account is locked', { retryAfter: lockoutSeconds });
    }
    await this.deps.audit.record(tenant, { action: 'signin.failure', outcome: 'failure', subjectId: userId, ip: ctx.ip, details: { method: 'pin', attempts: count } });
    throw new AppError('invalid_credentials', 'Invalid username or PIN');
  }

  private creds(tenant: string): CredentialRepository {
    return new CredentialRepository(this.deps.tenantDb(tenant));
  }
}
