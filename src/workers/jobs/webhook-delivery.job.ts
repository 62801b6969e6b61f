import type { JobHandler } from '../job-handler.js';

/** One delivery run of a webhook subscription: its events in log order from its cursor. */
export const webhookDeliveryJob: JobHandler<'webhook-delivery'> = async (job, { services }) => ({
  outcome: await services.webhooks.delivery.run(job.data.tenant, job.data.subscriptionId),
});
