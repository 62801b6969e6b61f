import { AppError, isAppError } from '../../kernel/errors.js';
import type {
  SessionRepository,
  SessionMethod,
  SessionRecord,
  SessionRevokeFilter,
} from '../../data/repositories/session.repository.js';
import type { AccountRecord, CredentialRepository } from '../../data/repositories/credential.repository.js';
import type { OfflineTokenRepository } from '../../data/repositories/offline-token.repository.js';
import type { InternalTokens } from '../../auth/internal-tokens.js';
import { OFFLINE_PERMISSIONS, intersect, type Authorizer } from '../../auth/authorizer.js';
import type { Revocations } from '../../auth/revocations.js';
import type { RealmLogout } from '../../auth/realm-logout.js';
import { isPermission, type Permission } from '../../kernel/permissions.js';
import { presentUser, type LoginMeta, type LoginResponse, type StartSession } from './sign-in-context.js';
import { randomSecret, sha256 } from '../../kernel/secrets.js';
import type { SecurityRulesService } from './security-rules.service.js';
import type { AuditService } from '../audit/audit.service.js';

/** What a derived session takes from its parent. */
interface Lineage {
  parentSessionId?: string;
  parentIdpSid?: string;
  permissionCap?: string[];
  purpose?: string;
  offlineTokenId?: string;
  notAfter?: Date;
}

export interface SessionServiceDeps {
  /** Per-tenant repositories (factories of the composition root). */
  sessions(tenant: string): SessionRepository;
  credentials(tenant: string): CredentialRepository;
  offlineTokens(tenant: string): OfflineTokenRepository;
  tokens: InternalTokens;
  authorizer: Authorizer;
  revocations: Revocations;
  realm: RealmLogout;
  rules: SecurityRulesService;
  audit: AuditService;
  /** How long after a rotation the superseded refresh token still rotates once more instead of revoking (decision 1103). */
  refreshReuseGraceSeconds: number;
}

/**
 * Server-side sessions behind internal tokens. A refresh token `rt_<sessionId>.<secret>` is single use:
 * each refresh swaps its hash atomically, and presenting a superseded one revokes the whole session.
 */
export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  /**
   * A sign-in: starts the session and audits `signin.success` with its method (and `details`, such as
   * the QR device's name or the offline token's purpose). Every sign-in method ends here; impersonation
   * starts its session with `start` and audits its own action.
   */
  async issueSignedIn(s: StartSession, details: Record<string, unknown> = {}): Promise<LoginResponse> {
    const session = await this.start(s);
    await this.deps.audit.record(s.tenant, {
      action: 'signin.success',
      outcome: 'success',
      subjectId: session.user.id,
      ip: s.ip,
      details: { method: s.method, ...details },
    });
    return session;
  }

  async start(s: StartSession): Promise<LoginResponse> {
    const rules = await this.deps.rules.get(s.tenant);
    const lineage = await this.lineage(s);
    const purpose = s.purpose ?? lineage.purpose;
    const offlineTokenId = s.offlineTokenId ?? lineage.offlineTokenId;
    const sessionId = randomSecret(16);
    const secret = randomSecret(32);
    const ownExpiry = Date.now() + rules.session.refreshTokenTtlSeconds * 1000;
    const refreshExpiresAt = new Date(Math.min(ownExpiry, lineage.notAfter?.getTime() ?? ownExpiry));
    await this.deps.sessions(s.tenant).create({
      _id: sessionId,
      userId: s.user._id.toString(),
      method: s.method,
      refreshHash: sha256(secret),
      expiresAt: refreshExpiresAt,
      actorUserId: s.actor?._id.toString(),
      purpose,
      offlineTokenId,
      parentSessionId: lineage.parentSessionId,
      parentIdpSid: lineage.parentIdpSid,
      permissionCap: lineage.permissionCap,
      idpSid: s.idpSid,
      ip: s.ip,
      userAgent: s.userAgent?.slice(0, 300),
    });
    if (lineage.parentSessionId) await this.assertParentLive(s.tenant, sessionId, lineage.parentSessionId);
    if (lineage.parentIdpSid) await this.assertRealmParentLive(s.tenant, sessionId, lineage.parentIdpSid);
    await this.enforceCap(s.tenant, s.user._id.toString(), rules.session.maxSessionsPerUser);
    const permissions = await this.permissionsFor(s.tenant, s.user, {
      actor: s.actor,
      offlineTokenId,
      cap: lineage.permissionCap,
    });
    const meta = await this.issue(
      s.tenant,
      s.user,
      sessionId,
      `rt_${sessionId}.${secret}`,
      refreshExpiresAt,
      permissions,
      s.actor,
      purpose,
    );
    return {
      ...meta,
      permissions,
      user: presentUser(s.user),
      ...(s.actor ? { impersonatedBy: s.actor._id.toString() } : {}),
      ...(purpose ? { purpose } : {}),
    };
  }

  /** The parent's constraints on a derived session; a parent that is gone, revoked or expired mints nothing. */
  private async lineage(s: StartSession): Promise<Lineage> {
    if (!s.parent) return {};
    const permissionCap = [...s.parent.permissions].sort();
    if (!s.parent.sessionId && s.parent.realmSid) {
      await this.realmParentLive(s.tenant, s.parent.realmSid);
      return { permissionCap, parentIdpSid: s.parent.realmSid };
    }
    if (!s.parent.sessionId) return { permissionCap };
    const parent = await this.find(s.tenant, s.parent.sessionId);
    if (!parent || parent.revokedAt || parent.expiresAt <= new Date())
      throw new AppError('session_revoked', 'The session that approved this sign-in has ended');
    return {
      parentSessionId: parent._id,
      permissionCap,
      notAfter: parent.expiresAt,
      ...(parent.purpose ? { purpose: parent.purpose } : {}),
      ...(parent.offlineTokenId ? { offlineTokenId: parent.offlineTokenId } : {}),
    };
  }

  /** Closes the race of a parent revoked while its child was being written: the child goes too. */
  private async assertParentLive(tenant: string, sessionId: string, parentSessionId: string): Promise<void> {
    const parent = await this.find(tenant, parentSessionId);
    if (parent && !parent.revokedAt) return;
    await this.revoke(tenant, { ids: [sessionId] }, 'parent_revoked');
    throw new AppError('session_revoked', 'The session that approved this sign-in has ended');
  }

  /** Refuses to derive from a realm session that has ended (its `sid` is marked by every sign-out path). */
  private async realmParentLive(tenant: string, sid: string): Promise<void> {
    try {
      await this.deps.revocations.check({ tenant, idpSid: sid });
    } catch (e) {
      if (isAppError(e) && e.code === 'session_revoked')
        throw new AppError('session_revoked', 'The session that approved this sign-in has ended');
      throw e;
    }
  }

  /** The same race as assertParentLive for a realm parent: ended while the child was being written. */
  private async assertRealmParentLive(tenant: string, sessionId: string, sid: string): Promise<void> {
    try {
      await this.realmParentLive(tenant, sid);
    } catch (e) {
      await this.revoke(tenant, { ids: [sessionId] }, 'parent_revoked');
      throw e;
    }
  }

  /** Rotates the refresh token; reuse of a superseded one revokes the session (theft detection). */
  async refresh(tenant: string, refreshToken: string): Promise<LoginMeta> {
    const parsed = /^rt_([A-Za-z0-9_-]{10,64})\.([A-Za-z0-9_-]{20,128})$/.exec(refreshToken);
    if (!parsed) throw new AppError('invalid_credentials', 'Refresh token is malformed');
    const [, sessionId, secret] = parsed as unknown as [string, string, string];
    const repo = this.deps.sessions(tenant);
    const nextSecret = randomSecret(32);
    const now = new Date();
    const rotated =
      (await repo.rotate(sessionId, sha256(secret), sha256(nextSecret), now)) ??
      (await this.rotateLostAnswer(tenant, sessionId, sha256(secret), sha256(nextSecret), now));
    const creds = this.deps.credentials(tenant);
    const user = await creds.findById(String(rotated.userId));
    const actor = rotated.actorUserId ? await creds.findById(String(rotated.actorUserId)) : undefined;
    if (!user || user.status !== 'active' || actor === null || (actor && actor.status !== 'active')) {
      await this.revoke(tenant, { ids: [sessionId] }, 'account_inactive');
      throw new AppError('session_revoked', 'The account of this session is no longer active');
    }
    if (rotated.parentSessionId) await this.assertParentLive(tenant, sessionId, rotated.parentSessionId);
    const permissions = await this.permissionsFor(tenant, user, {
      actor: actor ?? undefined,
      offlineTokenId: rotated.offlineTokenId ?? undefined,
      cap: rotated.permissionCap ?? undefined,
    });
    return this.issue(
      tenant,
      user,
      sessionId,
      `rt_${sessionId}.${nextSecret}`,
      rotated.expiresAt,
      permissions,
      actor ?? undefined,
      rotated.purpose ?? undefined,
    );
  }

  /**
   * Revokes live sessions, marks them for every node and announces them to the hub; then, generation by
   * generation, the sessions they minted and the offline tokens those minted (with their sessions).
   * A session opened from a realm sign-in ends that realm session too (its cookie, grant and
   * identity-provider tokens), and with it the other sessions opened from it; only the per-user cap
   * leaves realm sessions alone.
   */
  async revoke(tenant: string, filter: SessionRevokeFilter, reason: string): Promise<SessionRecord[]> {
    const repo = this.deps.sessions(tenant);
    const all: SessionRecord[] = [];
    let generation = await repo.revoke(filter, reason);
    while (generation.length) {
      all.push(...generation);
      for (const s of generation)
        await this.deps.revocations.revoke({ tenant, sessionId: s._id, userId: String(s.userId) });
      const ids = generation.map((s) => s._id);
      const tokens = await this.deps.offlineTokens(tenant).revokeIssuedBy(ids);
      generation = await repo.revoke({ parentSessionIds: ids }, 'parent_revoked');
      if (tokens.length) generation.push(...(await repo.revoke({ offlineTokenIds: tokens }, 'parent_revoked')));
    }
    if (reason === 'session_limit') return all;
    const realmSessions = new Map(
      all.filter((s) => s.idpSid && s.idpSid !== filter.idpSid).map((s) => [s.idpSid!, String(s.userId)]),
    );
    for (const [sid, userId] of realmSessions) all.push(...(await this.endRealmSession(tenant, userId, sid, reason)));
    return all;
  }

  /**
   * Ends a realm session, every session opened from it and every session derived from it (sign-out,
   * back-channel logout, realm token reuse, the realm's own logout).
   */
  async endRealmSession(tenant: string, userId: string, sid: string, reason: string): Promise<SessionRecord[]> {
    await this.deps.realm.endSession(tenant, userId, sid);
    const opened = await this.revoke(tenant, { idpSid: sid }, reason);
    return [...opened, ...(await this.revoke(tenant, { parentIdpSid: sid }, 'parent_revoked'))];
  }

  /** Signs a user out everywhere: every session, every realm session, every identity-provider token issued so far. */
  async endUser(tenant: string, user: { id: string; subject: string }, reason: string): Promise<SessionRecord[]> {
    const revoked = await this.revoke(tenant, { userId: user.id }, reason);
    await this.deps.realm.endUser(tenant, user.id, user.subject);
    return revoked;
  }

  find(tenant: string, sessionId: string): Promise<SessionRecord | null> {
    return this.deps.sessions(tenant).findById(sessionId);
  }

  /** Keeps at most `max` live sessions per user by revoking the oldest (tenant rule maxSessionsPerUser). */
  private async enforceCap(tenant: string, userId: string, max: number): Promise<void> {
    const live = await this.deps.sessions(tenant).liveIdsForUser(userId, new Date());
    if (live.length > max) await this.revoke(tenant, { ids: live.slice(0, live.length - max) }, 'session_limit');
  }

  /**
   * The refresh token superseded last, presented again within the grace window: the client did not get
   * the answer of its refresh (a network drop) and retries. It rotates once more (the pair the client
   * lost is superseded in turn) instead of revoking the session as reuse. Any older token, or this one
   * after the window, is reuse (decision 1103).
   */
  private async rotateLostAnswer(
    tenant: string,
    sessionId: string,
    presentedHash: string,
    nextHash: string,
    now: Date,
  ): Promise<SessionRecord> {
    const grace = this.deps.refreshReuseGraceSeconds * 1000;
    const session = grace > 0 ? await this.find(tenant, sessionId) : null;
    const rotatedAt = session?.lastUsedAt ? new Date(session.lastUsedAt).getTime() : 0;
    if (
      session &&
      !session.revokedAt &&
      session.previousHashes.at(-1) === presentedHash &&
      now.getTime() - rotatedAt <= grace
    ) {
      const again = await this.deps
        .sessions(tenant)
        .rotate(sessionId, session.refreshHash, nextHash, now, { after: new Date(now.getTime() - grace) });
      if (again) {
        await this.deps.audit.record(tenant, {
          action: 'session.refresh_retried',
          outcome: 'success',
          subjectId: String(session.userId),
          details: { sessionId },
        });
        return again;
      }
    }
    return this.refuseRefresh(tenant, sessionId, presentedHash);
  }

  private async refuseRefresh(tenant: string, sessionId: string, presentedHash: string): Promise<never> {
    const session = await this.find(tenant, sessionId);
    if (session && !session.revokedAt && session.previousHashes.includes(presentedHash)) {
      await this.revoke(tenant, { ids: [sessionId] }, 'refresh_token_reuse');
      await this.deps.audit.record(tenant, {
        action: 'session.reuse_detected',
        outcome: 'failure',
        subjectId: String(session.userId),
        details: { sessionId },
      });
      throw new AppError('session_revoked', 'Refresh token reuse detected; the session has been revoked');
    }
    if (session?.revokedAt) throw new AppError('session_revoked', 'The session has been revoked');
    throw new AppError('invalid_credentials', 'Refresh token is not valid');
  }

  /** Role permissions, capped by the impersonator's (no escalation), the parent's and the offline token's scope. */
  private async permissionsFor(
    tenant: string,
    user: AccountRecord,
    by: { actor?: AccountRecord; offlineTokenId?: string; cap?: readonly string[] },
  ): Promise<Permission[]> {
    const { actor, offlineTokenId, cap } = by;
    let perms = [...(await this.deps.authorizer.permissionsOf(tenant, user.role))];
    if (actor) perms = intersect(perms, await this.deps.authorizer.permissionsOf(tenant, actor.role));
    if (cap) perms = intersect(perms, cap.filter(isPermission));
    if (offlineTokenId) {
      const token = await this.deps.offlineTokens(tenant).findById(offlineTokenId);
      perms = intersect(intersect(perms, OFFLINE_PERMISSIONS), (token?.permissions ?? []).filter(isPermission));
    }
    return perms.sort();
  }

  private async issue(
    tenant: string,
    user: AccountRecord,
    sessionId: string,
    refreshToken: string,
    refreshExpiresAt: Date,
    perms: Permission[],
    actor?: AccountRecord,
    purpose?: string,
  ): Promise<LoginMeta> {
    const ttl = (await this.deps.rules.get(tenant)).session.accessTokenTtlSeconds;
    const { token, expiresAt } = await this.deps.tokens.issue(
      {
        sub: user._id.toString(),
        tenant,
        role: user.role,
        perms,
        sid: sessionId,
        preferred_username: user.username,
        name: user.displayName,
        ...(user.kind === 'device' ? { kind: 'device' as const } : {}),
        ...(actor ? { act: { sub: actor._id.toString() } } : {}),
        ...(purpose ? { purpose } : {}),
      },
      ttl,
    );
    return {
      tokenType: 'Bearer',
      accessToken: token,
      expiresIn: ttl,
      expiresAt: expiresAt.toISOString(),
      refreshToken,
      refreshExpiresAt: refreshExpiresAt.toISOString(),
      sessionId,
    };
  }
}
