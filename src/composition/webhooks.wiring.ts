import type { AuditRecorder } from '../core/audit/audit-by.js';
import type { Infra, WebhookServices } from '../app/index.js';
import { WebhookSubscriptionRepository } from '../data/repositories/webhook-subscription.repository.js';
import { WebhookLogRepository } from '../data/repositories/webhook-log.repository.js';
import { SequenceHeads } from '../data/repositories/sequence-heads.js';
import { WebhookAttemptRepository } from '../data/repositories/webhook-attempt.repository.js';
import { postJson, type OutboundPolicy } from '../core/webhooks/outbound-request.js';
import { WebhookSubscriptionService } from '../core/webhooks/webhook-subscription.service.js';
import { WebhookDeliveryService, type DeliveryWake } from '../core/webhooks/webhook-delivery.service.js';
import { OutboxRelayService } from '../core/webhooks/outbox-relay.service.js';
import { WebhookSecrets, type SecretVault } from '../core/webhooks/webhook-secrets.js';

/**
 * Wires the webhook services from infra; `tenants` lists the tenants the sweep visits; `vault` (the
 * key vault of the signing keys) seals the signing secrets at rest.
 */
export function createWebhookServices(
  infra: Pick<Infra, 'mongo' | 'queues' | 'config' | 'logger'>,
  tenants: () => Promise<string[]>,
  vault: SecretVault,
  audit?: AuditRecorder,
): WebhookServices {
  const secrets = new WebhookSecrets(vault);
  const db = (t: string) => infra.mongo.tenantDb(t);
  const logHeads = new SequenceHeads();
  const repos = {
    subscriptions: (t: string) => new WebhookSubscriptionRepository(db(t)),
    log: (t: string) => new WebhookLogRepository(db(t), logHeads),
    attempts: (t: string) => new WebhookAttemptRepository(db(t)),
  };
  const c = infra.config.webhooks;
  const policy: OutboundPolicy = {
    allowPrivateNetworks: c.allowPrivateNetworks,
    allowHttp: c.allowHttp,
    allowLocalReceivers: c.allowLocalReceivers,
    timeoutMs: c.timeoutMs,
    maxResponseBytes: c.maxResponseBytes,
  };
  const enqueue = async (wake: DeliveryWake, delayMs = 0) => {
    await infra.queues.enqueue('webhook-delivery', wake, delayMs > 0 ? { delay: delayMs } : {});
  };
  const delivery = new WebhookDeliveryService({
    ...repos,
    send: (url, headers, body) => postJson(url, headers, body, policy),
    secrets,
    enqueue,
    timeoutMs: c.timeoutMs,
    pauseAfterFailures: c.pauseAfterFailures,
    backoffMs: c.backoffMs,
    backoffMaxMs: c.backoffMaxMs,
    logger: infra.logger,
  });
  const subscriptions = new WebhookSubscriptionService({
    ...repos,
    policy,
    secrets,
    enqueue: (w) => enqueue(w),
    retentionHours: c.retentionHours,
    secretGraceHours: c.secretGraceHours,
    pageMaxTake: infra.config.limits.pageMaxTake,
    audit,
  });
  const relay = new OutboxRelayService({
    ...repos,
    tenants,
    enqueue: (w) => enqueue(w),
    retentionHours: c.retentionHours,
    sweepMs: c.sweepMs,
    logger: infra.logger,
    sealStoredSecrets: (t) => subscriptions.sealStoredSecrets(t),
  });
  return { subscriptions, relay, delivery };
}
