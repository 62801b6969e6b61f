import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../kernel/principal.js';
import type {
  WebhookSubscriptionRecord,
  WebhookSubscriptionRepository,
} from '../../data/repositories/webhook-subscription.repository.js';
import type {
  WebhookAttemptRecord,
  WebhookAttemptRepository,
} from '../../data/repositories/webhook-attempt.repository.js';
import type { WebhookEventRecord, WebhookLogRepository } from '../../data/repositories/webhook-log.repository.js';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';
import { checkUrl, resolveChecked, type OutboundPolicy } from './outbound-request.js';
import { newSigningSecret, validSigningSecret } from './webhook-signature.js';
import type { DeliveryWake } from './webhook-delivery.service.js';
import type { WebhookSecrets } from './webhook-secrets.js';

export interface WebhookSubscriptionDeps {
  subscriptions: (tenant: string) => WebhookSubscriptionRepository;
  log: (tenant: string) => WebhookLogRepository;
  attempts: (tenant: string) => WebhookAttemptRepository;
  policy: OutboundPolicy;
  /** Seals the signing secrets at rest (decision 1043). */
  secrets: WebhookSecrets;
  /** Queues a delivery run (core/webhooks/webhook-delivery.service.ts). */
  enqueue: (wake: DeliveryWake) => Promise<void>;
  retentionHours: number;
  secretGraceHours: number;
  pageMaxTake: number;
  /** The tenant's audit trail: every change of a subscription is a configuration change (docs/audit.md). */
  audit?: AuditRecorder;
}

export interface CreateSubscription {
  url: string;
  types: string[];
  description?: string;
  secret?: string;
}

/** What an administrator sees of a subscription: never a secret, only which ones sign and until when. */
export interface SubscriptionView {
  id: string;
  url: string;
  description?: string;
  types: string[];
  status: 'active' | 'paused';
  pausedReason?: string;
  pausedAt?: string;
  cursor: string;
  consecutiveFailures: number;
  lastError?: string;
  lastAttemptAt?: string;
  lastSuccessAt?: string;
  nextAttemptAt?: string;
  secrets: { id: string; createdAt: string; expiresAt?: string }[];
  createdAt: string;
}

export interface LoggedEvent {
  sequence: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

const iso = (d?: Date | null) => (d ? new Date(d).toISOString() : undefined);

export function subscriptionView(s: WebhookSubscriptionRecord): SubscriptionView {
  const now = Date.now();
  return {
    id: String(s._id),
    url: s.url,
    ...(s.description ? { description: s.description } : {}),
    types: [...s.types],
    status: s.status,
    ...(s.pausedReason ? { pausedReason: s.pausedReason } : {}),
    ...(s.pausedAt ? { pausedAt: iso(s.pausedAt) } : {}),
    cursor: String(s.cursor),
    consecutiveFailures: s.failures ?? 0,
    ...(s.lastError ? { lastError: s.lastError } : {}),
    ...(s.lastAttemptAt ? { lastAttemptAt: iso(s.lastAttemptAt) } : {}),
    ...(s.lastSuccessAt ? { lastSuccessAt: iso(s.lastSuccessAt) } : {}),
    ...(s.nextAttemptAt && s.status === 'active' ? { nextAttemptAt: iso(s.nextAttemptAt) } : {}),
    secrets: s.secrets
      .filter((x) => !x.expiresAt || x.expiresAt.getTime() > now)
      .map((x) => ({
        id: x.id,
        createdAt: iso(x.createdAt)!,
        ...(x.expiresAt ? { expiresAt: iso(x.expiresAt) } : {}),
      })),
    createdAt: iso(s.createdAt)!,
  };
}

export function loggedEvent(e: WebhookEventRecord): LoggedEvent {
  return {
    sequence: String(e._id),
    id: e.eventId,
    type: e.type,
    timestamp: new Date(e.occurredAt).toISOString(),
    data: (e.data ?? {}) as Record<string, unknown>,
  };
}

/**
 * Tenant administrators' side of outbound events: subscriptions (create, list, pause, resume,
 * delete, rotate the secret), their attempts, the event log (replay) and re-delivery from a cursor.
 */
export class WebhookSubscriptionService {
  constructor(private readonly deps: WebhookSubscriptionDeps) {}

  async create(p: Principal, cmd: CreateSubscription): Promise<{ subscription: SubscriptionView; secret: string }> {
    await this.checkEndpoint(cmd.url);
    const secret = cmd.secret ?? newSigningSecret();
    if (!validSigningSecret(secret))
      throw new AppError('validation_failed', 'secret: must be whsec_ and 24 to 64 bytes in base64', {
        errors: [{ field: 'secret', message: 'must be whsec_ and 24 to 64 bytes in base64' }],
      });
    // A new subscription hears what happens from now on; earlier events are a replay away.
    const cursor = await this.deps.log(p.tenant).head();
    const secretId = randomUUID();
    const created = await this.deps.subscriptions(p.tenant).create({
      url: cmd.url,
      description: cmd.description,
      types: [...new Set(cmd.types)],
      secret: { id: secretId, value: await this.deps.secrets.seal(p.tenant, secretId, secret), createdAt: new Date() },
      cursor,
    });
    await this.audited(p, 'webhook.create', String(created._id), {
      host: hostOf(cmd.url),
      types: [...new Set(cmd.types)].sort(),
    });
    return { subscription: subscriptionView(created), secret };
  }

  async list(p: Principal): Promise<SubscriptionView[]> {
    return (await this.deps.subscriptions(p.tenant).list()).map(subscriptionView);
  }

  async get(p: Principal, id: string): Promise<SubscriptionView> {
    return subscriptionView(await this.require(p.tenant, id));
  }

  async pause(p: Principal, id: string): Promise<SubscriptionView> {
    const s = await this.require(p.tenant, id);
    const updated = await this.deps
      .subscriptions(p.tenant)
      .set(s._id, { status: 'paused', pausedReason: 'paused by an administrator', pausedAt: new Date() });
    await this.audited(p, 'webhook.pause', id);
    return subscriptionView(updated ?? s);
  }

  /** Active again from where it stopped: the failure run starts over and delivery resumes at once. */
  async resume(p: Principal, id: string): Promise<SubscriptionView> {
    const s = await this.require(p.tenant, id);
    const updated = await this.deps
      .subscriptions(p.tenant)
      .set(s._id, { status: 'active', failures: 0 }, ['pausedReason', 'pausedAt', 'nextAttemptAt']);
    await this.audited(p, 'webhook.resume', id);
    await this.kick(p.tenant, updated ?? s);
    return subscriptionView(updated ?? s);
  }

  async remove(p: Principal, id: string): Promise<void> {
    const s = await this.require(p.tenant, id);
    await this.deps.subscriptions(p.tenant).remove(s._id);
    await this.audited(p, 'webhook.delete', id, { host: hostOf(s.url) });
  }

  /** One entry per change of a subscription; the URL only by its host (a path or query may hold a token), never a secret. */
  private async audited(p: Principal, action: string, subscriptionId: string, details: Record<string, unknown> = {}) {
    await recordBy(this.deps.audit, p, action, { details: { subscriptionId, ...details } });
  }

  /**
   * A new secret signs from now on; the previous one keeps signing beside it for the grace period
   * (`webhook-signature` carries both), so receivers switch without a window of failures.
   */
  async rotateSecret(
    p: Principal,
    id: string,
    cmd: { secret?: string; graceHours?: number },
  ): Promise<{ subscription: SubscriptionView; secret: string }> {
    const s = await this.require(p.tenant, id);
    const secret = cmd.secret ?? newSigningSecret();
    if (!validSigningSecret(secret))
      throw new AppError('validation_failed', 'secret: must be whsec_ and 24 to 64 bytes in base64', {
        errors: [{ field: 'secret', message: 'must be whsec_ and 24 to 64 bytes in base64' }],
      });
    const now = new Date();
    const current = s.secrets.find((x) => !x.expiresAt) ?? s.secrets[0];
    const grace = (cmd.graceHours ?? this.deps.secretGraceHours) * 3_600_000;
    const secretId = randomUUID();
    const secrets = [
      { id: secretId, value: await this.deps.secrets.seal(p.tenant, secretId, secret), createdAt: now },
      ...(current && grace > 0
        ? [
            // The previous secret keeps its sealed value (sealed now if it was still in clear).
            await this.deps.secrets.stored(p.tenant, {
              id: current.id,
              value: current.value,
              createdAt: current.createdAt,
              expiresAt: new Date(now.getTime() + grace),
            }),
          ]
        : []),
    ];
    const updated = await this.deps.subscriptions(p.tenant).setSecrets(s._id, secrets);
    await this.audited(p, 'webhook.rotate_secret', id, { graceHours: grace / 3_600_000 });
    return { subscription: subscriptionView(updated ?? s), secret };
  }

  async attempts(p: Principal, id: string, take: number): Promise<WebhookAttemptRecord[]> {
    const s = await this.require(p.tenant, id);
    return this.deps.attempts(p.tenant).list(s._id, Math.min(take, this.deps.pageMaxTake));
  }

  /**
   * The tenant's events after `after` in log order, at most `take`: from any point of the retention
   * window. A cursor older than the oldest kept event answers webhook_cursor_expired (events are missing).
   */
  async events(
    p: Principal,
    q: { after?: string; take: number; types?: string[] },
  ): Promise<{ events: LoggedEvent[]; next: string; head: string }> {
    const log = this.deps.log(p.tenant);
    const after = await this.cursorWithinRetention(log, q.after);
    const page = await log.page(after, Math.min(q.take, this.deps.pageMaxTake), q.types);
    const head = await log.head();
    const last = page[page.length - 1];
    return {
      events: page.map(loggedEvent),
      next: String(last ? last._id : after),
      head: String(head),
    };
  }

  /**
   * Re-delivers everything after `after` (by the same event ids, so receivers can tell repeats): the
   * subscription's cursor moves back and any run in progress loses its lease, so it cannot move it on.
   */
  async replay(p: Principal, id: string, after: string): Promise<SubscriptionView> {
    const s = await this.require(p.tenant, id);
    const log = this.deps.log(p.tenant);
    const cursor = Math.min(await this.cursorWithinRetention(log, after), await log.head());
    const updated = await this.deps
      .subscriptions(p.tenant)
      .set(s._id, { cursor, failures: 0 }, ['lease', 'nextAttemptAt']);
    await this.audited(p, 'webhook.replay', id, { after: String(cursor) });
    if (s.status === 'active') await this.kick(p.tenant, updated ?? s);
    return subscriptionView(updated ?? s);
  }

  private async cursorWithinRetention(log: WebhookLogRepository, after: string | undefined): Promise<number> {
    if (after === undefined) return 0;
    if (!/^\d{1,15}$/.test(after))
      throw new AppError('validation_failed', 'after: must be a cursor (a sequence number)', {
        errors: [{ field: 'after', message: 'must be a cursor (a sequence number)' }],
      });
    const cursor = Number(after);
    const oldest = await log.oldest();
    if (oldest !== undefined && cursor < oldest - 1)
      throw new AppError(
        'webhook_cursor_expired',
        `Events up to ${oldest - 1} are past the ${this.deps.retentionHours} h retention; the oldest cursor is ${oldest - 1}`,
      );
    return cursor;
  }

  /** A wake-up of its own (named by the time), so an administrator's action is never swallowed by an earlier one. */
  private kick(tenant: string, s: WebhookSubscriptionRecord): Promise<void> {
    return this.deps.enqueue({ tenant, subscriptionId: String(s._id), key: `${s.runs}.a${Date.now()}` });
  }

  /** Seals the tenant's secrets still stored in clear or under the previous key (the relay's sweep calls it). */
  sealStoredSecrets(tenant: string): Promise<number> {
    return this.deps.secrets.sealStored(tenant, this.deps.subscriptions(tenant));
  }

  private async checkEndpoint(url: string): Promise<void> {
    const parsed = checkUrl(url, this.deps.policy);
    await resolveChecked(parsed.hostname, this.deps.policy);
  }

  private async require(tenant: string, id: string): Promise<WebhookSubscriptionRecord> {
    const s = await this.deps.subscriptions(tenant).findById(oid(id, 'webhook_subscription_not_found'));
    if (!s) throw new AppError('webhook_subscription_not_found', `No webhook subscription ${id}`);
    return s;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
