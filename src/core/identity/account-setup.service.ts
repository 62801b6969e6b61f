import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { AppError } from '../../kernel/errors.js';
import { PendingUserRow } from '../media/pending-user-sheet.js';
import type { AccountRecord, CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { AccountSetupRepository } from '../../data/repositories/account-setup.repository.js';
import { randomSecret, sha256, slowHash } from '../../kernel/secrets.js';
import type { AuditService } from '../audit/audit.service.js';

/** Subjects of accounts that wait for their first identity-provider sign-in start with this. */
const UNBOUND = 'unbound:';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

export interface AccountSetupDeps {
  /** Per-tenant repositories (factories of the composition root). */
  credentials(tenant: string): CredentialRepository;
  setups(tenant: string): AccountSetupRepository;
  audit: Pick<AuditService, 'record'>;
  /** `embedded`: the service's realm checks passwords (set-password links); `external`: bind at first sign-in. */
  mode: 'embedded' | 'external';
  /** Base URL of the realm pages (PUBLIC_URL). */
  publicUrl: string;
  linkTtlSeconds: number;
}

/** A named account to create (the first admin): the same field rules as an imported row. */
export const AccountInput = z.object({
  username: PendingUserRow.shape.username,
  email: z.email('not a valid e-mail address').max(254).optional(),
  displayName: PendingUserRow.shape.displayName.optional(),
});

export interface NewAccount extends z.infer<typeof AccountInput> {
  role: string;
}

/** What the operator or admin hands on to the person: a set-password link, or how the first sign-in binds. */
export interface ProvisionedAccount {
  userId: string;
  username: string;
  role: string;
  /** False when the account existed already. */
  created: boolean;
  /** The account can sign in already (a password is set, or it is bound to its identity-provider subject). */
  ready: boolean;
  setPasswordUrl?: string;
  binding?: { email?: string; username: string };
  expiresAt?: string;
}

/**
 * Gives accounts their first credential without anyone else knowing it. With the embedded realm a
 * one-time set-password link (only its SHA-256 is stored; the newest link supersedes older ones); with
 * an external identity provider, a binding: the first sign-in whose token carries the account's
 * verified email (or, for an account without an email, its username) takes the account (decisions 180, 960).
 */
export class AccountSetupService {
  constructor(private readonly deps: AccountSetupDeps) {}

  /**
   * Creates the account (or finds it by username) and opens its set-up. An account that can sign in
   * already is returned as is (no new link). `purpose` says why, for the audit trail.
   */
  async provision(
    tenant: string,
    input: NewAccount,
    purpose: 'first-admin' | 'activation',
    by?: string,
  ): Promise<ProvisionedAccount> {
    const creds = this.deps.credentials(tenant);
    const username = input.username.toLowerCase().trim();
    let user = await creds.findByUsername(username);
    let created = false;
    if (!user) {
      const idpSubject = this.deps.mode === 'external' ? `${UNBOUND}${randomUUID()}` : undefined;
      try {
        await creds.create({
          username,
          displayName: input.displayName ?? username,
          role: input.role,
          ...(input.email ? { email: input.email } : {}),
          ...(idpSubject ? { idpSubject } : {}),
        });
        created = true;
      } catch (e) {
        if ((e as { code?: number }).code !== 11000) throw e;
      }
      user = await creds.findByUsername(username);
      if (!user) throw new AppError('conflict', `The account '${username}' could not be created`);
    }
    if (purpose === 'first-admin' && user.role !== input.role) {
      throw new AppError('conflict', `The account '${username}' exists with the role '${user.role}'`);
    }
    const base = { userId: user._id.toString(), username: user.username, role: user.role, created };
    if (this.ready(user)) return { ...base, ready: true };
    const expiresAt = new Date(Date.now() + this.deps.linkTtlSeconds * 1000);
    const setups = this.deps.setups(tenant);
    let result: ProvisionedAccount;
    if (this.deps.mode === 'embedded') {
      const token = randomSecret(32);
      await setups.issue({
        id: sha256(token),
        kind: 'password',
        userId: base.userId,
        purpose,
        expiresAt,
        createdBy: by,
      });
      result = {
        ...base,
        ready: false,
        setPasswordUrl: this.linkFor(tenant, token),
        expiresAt: expiresAt.toISOString(),
      };
    } else {
      const email = user.email ?? input.email ?? undefined;
      await setups.issue({
        id: randomUUID(),
        kind: 'binding',
        userId: base.userId,
        purpose,
        email,
        username: user.username,
        expiresAt,
        createdBy: by,
      });
      result = {
        ...base,
        ready: false,
        binding: { ...(email ? { email } : {}), username: user.username },
        expiresAt: expiresAt.toISOString(),
      };
    }
    // `by` is the admin's user id, or the tool that asked ('cli', 'provisioning').
    const actor = by && /^[a-f0-9]{24}$/.test(by) ? { actorId: by } : {};
    await this.deps.audit.record(tenant, {
      action: `account.setup.${this.deps.mode === 'embedded' ? 'link' : 'binding'}`,
      outcome: 'success',
      ...actor,
      subjectId: base.userId,
      details: { purpose, created, ...(by && !actor.actorId ? { via: by } : {}) },
    });
    return result;
  }

  /** The account a set-password link is for, while the link is open; `setup_link_invalid` otherwise. */
  async linkAccount(tenant: string, token: string): Promise<{ username: string; displayName: string }> {
    const open = await this.deps.setups(tenant).findOpen(sha256(token));
    const user =
      open?.kind === 'password' ? await this.deps.credentials(tenant).findById(open.userId.toString()) : null;
    if (!user)
      throw new AppError(
        'setup_link_invalid',
        'This link is unknown, used, replaced by a newer one or expired; ask your administrator for a new one',
      );
    return { username: user.username, displayName: user.displayName };
  }

  /** Sets the password through an open link, once: a second use, or a superseded or expired link, is refused. */
  async setPassword(tenant: string, token: string, password: string, ip?: string): Promise<{ username: string }> {
    const { username } = await this.linkAccount(tenant, token);
    checkPassword(password, username);
    const hash = await slowHash(password);
    const used = await this.deps.setups(tenant).use(sha256(token));
    if (!used)
      throw new AppError(
        'setup_link_invalid',
        'This link has just been used or replaced; ask your administrator for a new one',
      );
    await this.deps.credentials(tenant).setPasswordHash(used.userId.toString(), hash);
    await this.deps.audit.record(tenant, {
      action: 'account.password_set',
      outcome: 'success',
      actorId: used.userId.toString(),
      subjectId: used.userId.toString(),
      ip,
      details: { purpose: used.purpose },
    });
    return { username };
  }

  /**
   * First sign-in through an external identity provider: a subject no account has yet takes the account
   * waiting for its verified email, or an account waiting with no email for its username. Exactly one
   * account must match.
   */
  async bindOnFirstSignIn(tenant: string, claims: JWTPayload): Promise<AccountRecord | null> {
    if (this.deps.mode !== 'external' || typeof claims.sub !== 'string') return null;
    const email = claims.email_verified === true && typeof claims.email === 'string' ? claims.email : undefined;
    const username = typeof claims.preferred_username === 'string' ? claims.preferred_username : undefined;
    const setups = this.deps.setups(tenant);
    const open = await setups.openBindings({ email, username });
    const byEmail = email ? open.filter((o) => o.email === email.toLowerCase()) : [];
    // An account waiting for an email is taken by that verified email only, never by username (decision 960).
    const candidates = byEmail.length ? byEmail : open.filter((o) => !o.email);
    if (candidates.length !== 1) return null;
    const setup = candidates[0]!;
    const creds = this.deps.credentials(tenant);
    const user = await creds.findById(setup.userId.toString());
    if (!user || !user.idpSubject.startsWith(UNBOUND)) return null;
    if (!(await setups.use(setup._id))) return null;
    if (!(await creds.bindSubject(user._id.toString(), user.idpSubject, claims.sub))) return null;
    await this.deps.audit.record(tenant, {
      action: 'account.bound',
      outcome: 'success',
      actorId: user._id.toString(),
      subjectId: user._id.toString(),
      details: { by: byEmail.length ? 'email' : 'username', purpose: setup.purpose },
    });
    return creds.findBySubject(claims.sub);
  }

  private ready(user: AccountRecord): boolean {
    return this.deps.mode === 'embedded' ? Boolean(user.passwordHash) : !user.idpSubject.startsWith(UNBOUND);
  }

  private linkFor(tenant: string, token: string): string {
    return `${this.deps.publicUrl.replace(/\/$/, '')}/realms/${encodeURIComponent(tenant)}/set-password?token=${encodeURIComponent(token)}`;
  }
}

/** Password policy of the embedded realm (decision 180): length bounds, not the username. */
export function checkPassword(password: string, username: string): void {
  const problems: string[] = [];
  if (password.length < PASSWORD_MIN_LENGTH) problems.push(`at least ${PASSWORD_MIN_LENGTH} characters`);
  if (password.length > PASSWORD_MAX_LENGTH) problems.push(`at most ${PASSWORD_MAX_LENGTH} characters`);
  if (password.toLowerCase().includes(username.toLowerCase())) problems.push('must not contain the username');
  if (problems.length)
    throw new AppError('password_policy_violation', `Password: ${problems.join('; ')}`, {
      errors: problems.map((message) => ({ field: 'password', message })),
    });
}
