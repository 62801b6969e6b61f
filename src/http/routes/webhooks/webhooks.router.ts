import { op, type RouteGroup } from '../route-spec.js';
import {
  AttemptList,
  AttemptsQuery,
  CreateSubscriptionBody,
  EventPage,
  EventsQuery,
  ReplayBody,
  RotateSecretBody,
  Subscription,
  SubscriptionList,
  SubscriptionParams,
  SubscriptionWithSecret,
} from './webhooks.schema.js';

const NOT_FOUND = ['webhook_subscription_not_found'] as const;

/**
 * /api/webhooks: tenant administrators manage subscriptions and read the event log (docs/webhooks.md).
 * Each route is one call of services.webhooks.subscriptions.
 */
export const webhookRoutes: RouteGroup = {
  base: '/api/webhooks',
  tag: 'Webhooks',
  description: 'Outbound events: subscriptions, delivery attempts, the event log and replay',
  routes: [
    op({
      operationId: 'webhooks.createSubscription',
      errors: ['url_not_allowed'],
      method: 'post',
      path: '/subscriptions',
      body: CreateSubscriptionBody,
      status: 201,
      response: SubscriptionWithSecret,
      summary: 'Subscribe an endpoint to event types; answers the signing secret once',
      handle: (s, { p, body }) => s.webhooks.subscriptions.create(p, body),
    }),
    op({
      operationId: 'webhooks.listSubscriptions',
      method: 'get',
      path: '/subscriptions',
      response: SubscriptionList,
      summary: "The tenant's subscriptions with their delivery state (why one is paused, its last error)",
      handle: async (s, { p }) => ({ subscriptions: await s.webhooks.subscriptions.list(p) }),
    }),
    op({
      operationId: 'webhooks.getSubscription',
      errors: [...NOT_FOUND],
      method: 'get',
      path: '/subscriptions/:subscriptionId',
      params: SubscriptionParams,
      response: Subscription,
      summary: 'One subscription with its delivery state',
      handle: (s, { p, params }) => s.webhooks.subscriptions.get(p, params.subscriptionId),
    }),
    op({
      operationId: 'webhooks.pauseSubscription',
      errors: [...NOT_FOUND],
      method: 'post',
      path: '/subscriptions/:subscriptionId/pause',
      params: SubscriptionParams,
      response: Subscription,
      summary: 'Stop delivering (events keep accumulating in the log)',
      handle: (s, { p, params }) => s.webhooks.subscriptions.pause(p, params.subscriptionId),
    }),
    op({
      operationId: 'webhooks.resumeSubscription',
      errors: [...NOT_FOUND],
      method: 'post',
      path: '/subscriptions/:subscriptionId/resume',
      params: SubscriptionParams,
      response: Subscription,
      summary: 'Deliver again from where delivery stopped',
      handle: (s, { p, params }) => s.webhooks.subscriptions.resume(p, params.subscriptionId),
    }),
    op({
      operationId: 'webhooks.deleteSubscription',
      errors: [...NOT_FOUND],
      method: 'post',
      path: '/subscriptions/:subscriptionId/delete',
      params: SubscriptionParams,
      empty: true,
      summary: 'Delete a subscription and its attempt records',
      handle: async (s, { p, params, res }) => {
        await s.webhooks.subscriptions.remove(p, params.subscriptionId);
        res.status(200).end();
      },
    }),
    op({
      operationId: 'webhooks.rotateSecret',
      errors: [...NOT_FOUND],
      method: 'post',
      path: '/subscriptions/:subscriptionId/rotateSecret',
      params: SubscriptionParams,
      body: RotateSecretBody,
      response: SubscriptionWithSecret,
      summary: 'New signing secret; the previous one keeps signing beside it for the grace period',
      handle: (s, { p, params, body }) => s.webhooks.subscriptions.rotateSecret(p, params.subscriptionId, body),
    }),
    op({
      operationId: 'webhooks.attempts',
      errors: [...NOT_FOUND],
      method: 'get',
      path: '/subscriptions/:subscriptionId/attempts',
      params: SubscriptionParams,
      query: AttemptsQuery,
      response: AttemptList,
      summary: 'Delivery attempts, newest first: status, latency, error',
      handle: async (s, { p, params, query }) => ({
        attempts: (await s.webhooks.subscriptions.attempts(p, params.subscriptionId, query.take)).map((a) => ({
          eventId: a.eventId,
          sequence: String(a.seq),
          at: new Date(a.at).toISOString(),
          ok: a.ok,
          ...(a.status != null ? { status: a.status } : {}),
          latencyMs: a.latencyMs,
          ...(a.error ? { error: a.error } : {}),
        })),
      }),
    }),
    op({
      operationId: 'webhooks.replay',
      errors: [...NOT_FOUND, 'webhook_cursor_expired'],
      method: 'post',
      path: '/subscriptions/:subscriptionId/replay',
      params: SubscriptionParams,
      body: ReplayBody,
      response: Subscription,
      summary: 'Deliver again every event after a cursor (same event ids)',
      handle: (s, { p, params, body }) => s.webhooks.subscriptions.replay(p, params.subscriptionId, body.after),
    }),
    op({
      operationId: 'webhooks.events',
      errors: ['webhook_cursor_expired'],
      method: 'get',
      path: '/events',
      query: EventsQuery,
      response: EventPage,
      summary: "The tenant's events after a cursor, in order, from any point of the retention window",
      handle: (s, { p, query }) => s.webhooks.subscriptions.events(p, query),
    }),
  ],
};
