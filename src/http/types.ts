import type { ResolvedTenant } from '../core/tenants/tenant.service.js';
import type { TenantDb } from '../data/mongo.js';
import type { Principal } from '../kernel/principal.js';
import type { AppError } from '../kernel/errors.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      correlationId: string;
      /** Tenant named by the host's subdomain, when it names one. */
      tenant?: ResolvedTenant;
      tenantDb?: TenantDb;
      principal?: Principal;
      /** A bearer token refused on /graphql, answered there as a GraphQL error (middleware/auth.ts). */
      authError?: AppError;
    }
  }
}

export {};
