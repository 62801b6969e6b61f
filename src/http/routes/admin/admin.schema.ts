import { z } from 'zod';

export const MigrateParams = z.object({ tenantName: z.string().min(1).max(63) });
export const MigrateQuery = z.object({ code: z.string().min(1, 'the provisioning code is required') });
export const MigrateBody = z.object({ displayName: z.string().min(1).max(200).optional() }).optional();
export const MigrateResult = z.object({ tenant: z.string(), from: z.number().int(), to: z.number().int(), applied: z.array(z.string()), indexesEnsured: z.number().int() });
