import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import { AppError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { AccountSetupService, ProvisionedAccount } from '../identity/account-setup.service.js';
import type { ImportRepository, ImportRecord } from '../../data/repositories/import.repository.js';
import type { PendingUserFilter, PendingUserRepository } from '../../data/repositories/pending-user.repository.js';
import type { Page } from '../../kernel/paging.js';

/** The most accounts one activation request makes (each may carry a set-password link to hand on). */
export const MAX_ACTIVATIONS_PER_REQUEST = 500;

export interface ActivationDeps {
  imports(tenant: string): ImportRepository;
  pendingUsers(tenant: string): PendingUserRepository;
  accountSetup: Pick<AccountSetupService, 'provision'>;
  /** The tenant's audit trail: each activation request, with what became of its usernames (docs/audit.md). */
  audit?: AuditRecorder;
}

/** What became of one username of an activation request. */
export type ActivationOutcome =
  | { username: string; outcome: 'activated' | 'reissued'; account: ProvisionedAccount }
  | { username: string; outcome: 'already_activated' | 'not_found' }
  /** The row names a role the tenant no longer has: fix the role (or re-import the row) first. */
  | { username: string; outcome: 'refused'; reason: string };

export interface ActivationResult {
  results: ActivationOutcome[];
  /** With `importId`: the import's users still pending after this request (call again to go on). */
  remaining?: number;
}

export interface PendingUserView {
  username: string;
  email?: string;
  displayName: string;
  role: string;
  importId: string;
  rowNumber: number;
  status: 'pending' | 'activated';
  activatedAt?: Date;
  activatedBy?: string;
  userId?: string;
  createdAt?: Date;
}

/**
 * Turns imported pending users into users (docs/decisions/154-activation-of-imported-users.md): an admin
 * lists imports and pending users and activates them, singly, by list, or an import's next batch. Each
 * activation claims the pending row first (one conditional update, so concurrent admins never make two
 * links for one user), then provisions the account through the account set-up: a one-time set-password
 * link with the embedded realm, a first-sign-in binding with an external identity provider.
 */
export class ActivationService {
  constructor(private readonly deps: ActivationDeps) {}

  listImports(principal: Principal, skip: number, take: number): Promise<Page<ImportRecord>> {
    return this.deps
      .imports(principal.tenant)
      .list(skip, take)
      .then((r) => ({ ...r, skip, take }));
  }

  async listPending(
    principal: Principal,
    filter: PendingUserFilter,
    skip: number,
    take: number,
  ): Promise<Page<PendingUserView>> {
    const { items, total } = await this.deps.pendingUsers(principal.tenant).list(filter, skip, take);
    return {
      items: items.map((u) => ({
        username: u.username,
        ...(u.email ? { email: u.email } : {}),
        displayName: u.displayName,
        role: u.role,
        importId: u.importId,
        rowNumber: u.rowNumber,
        status: u.status,
        ...(u.activatedAt ? { activatedAt: u.activatedAt } : {}),
        ...(u.activatedBy ? { activatedBy: u.activatedBy.toString() } : {}),
        ...(u.userId ? { userId: u.userId.toString() } : {}),
        ...((u as { createdAt?: Date }).createdAt ? { createdAt: (u as { createdAt?: Date }).createdAt } : {}),
      })),
      total,
      skip,
      take,
    };
  }

  /**
   * Activates the named pending users, or the next `limit` pending users of an import. `reissue` gives an
   * activated user whose account cannot sign in yet a new link (the older one stops working): for a lost
   * link, or an activation interrupted between its claim and the account.
   */
  async activate(
    principal: Principal,
    input: { usernames?: string[]; importId?: string; limit?: number; reissue?: boolean },
  ): Promise<ActivationResult> {
    const pending = this.deps.pendingUsers(principal.tenant);
    if (input.importId && !(await this.deps.imports(principal.tenant).findById(input.importId)))
      throw new AppError('import_not_found');
    const limit = Math.min(input.limit ?? 100, MAX_ACTIVATIONS_PER_REQUEST);
    const usernames = input.usernames?.length
      ? [...new Set(input.usernames.map((u) => u.toLowerCase().trim()))]
      : input.importId
        ? await pending.nextPending(input.importId, limit)
        : [];
    if (usernames.length > MAX_ACTIVATIONS_PER_REQUEST)
      throw new AppError('validation_failed', `At most ${MAX_ACTIVATIONS_PER_REQUEST} users per request`, {
        errors: [{ field: 'usernames', message: `at most ${MAX_ACTIVATIONS_PER_REQUEST}` }],
      });
    const roles = usernames.length ? await pending.roleNames() : new Set<string>();
    const results: ActivationOutcome[] = [];
    for (const username of usernames)
      results.push(await this.activateOne(principal, pending, roles, username, input.reissue));
    const outcomes: Record<string, number> = {};
    for (const r of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    await recordBy(this.deps.audit, principal, 'import.activate', {
      details: { ...(input.importId ? { importId: input.importId } : {}), requested: usernames.length, outcomes },
    });
    return {
      results,
      ...(input.importId ? { remaining: await pending.countPending(input.importId) } : {}),
    };
  }

  private async activateOne(
    principal: Principal,
    pending: PendingUserRepository,
    roles: Set<string>,
    username: string,
    reissue = false,
  ): Promise<ActivationOutcome> {
    const row = await pending.findByUsername(username);
    if (!row) return { username, outcome: 'not_found' };
    if (!roles.has(row.role))
      return { username: row.username, outcome: 'refused', reason: `the role '${row.role}' no longer exists` };
    const claimed = await pending.claim(row.username, principal.userId);
    if (!claimed && !reissue) return { username: row.username, outcome: 'already_activated' };
    let account: ProvisionedAccount;
    try {
      account = await this.deps.accountSetup.provision(
        principal.tenant,
        {
          username: row.username,
          role: row.role,
          ...(row.email ? { email: row.email } : {}),
          displayName: row.displayName,
        },
        'activation',
        principal.userId,
      );
    } catch (e) {
      if (claimed) await pending.release(row.username);
      throw e;
    }
    await pending.linkUser(row.username, account.userId);
    return { username: row.username, outcome: claimed ? 'activated' : 'reissued', account };
  }
}
