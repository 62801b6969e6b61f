import { z } from 'zod';
import { AccountInput } from '../../../core/identity/account-setup.service.js';

export const MigrateParams = z.object({ tenantName: z.string().min(1).max(63) });
export const MigrateQuery = z.object({ code: z.string().min(1, 'the provisioning code is required') });
export const MigrateBody = z
  .object({
    displayName: z.string().min(1).max(200).optional(),
    admin: AccountInput.optional().describe(
      "The tenant's first admin: created when missing, with a set-password link (embedded realm) or a first-sign-in binding (external identity provider)",
    ),
  })
  .optional();
export const ProvisionedAccount = z.object({
  userId: z.string(),
  username: z.string(),
  role: z.string(),
  created: z.boolean().describe('false when the account existed already'),
  ready: z.boolean().describe('the account can sign in already (no link issued)'),
  setPasswordUrl: z
    .string()
    .optional()
    .describe('one-time set-password link (embedded realm); hand it to the person only'),
  binding: z
    .object({ email: z.string().optional(), username: z.string() })
    .optional()
    .describe('external identity provider: the first sign-in with this verified email (or username) takes the account'),
  expiresAt: z.string().optional(),
});
export const MigrateResult = z.object({
  tenant: z.string(),
  from: z.number().int(),
  to: z.number().int(),
  applied: z.array(z.string()),
  indexesEnsured: z.number().int(),
  admin: ProvisionedAccount.optional(),
});
