import type { Connection, Model } from 'mongoose';
import { TenantSchema, type TenantDoc } from './models/tenant.model.js';

export interface CatalogModels {
  Tenant: Model<TenantDoc>;
}

export function catalogModels(conn: Connection): CatalogModels {
  return {
    Tenant: (conn.models.Tenant as Model<TenantDoc>) ?? conn.model<TenantDoc>('Tenant', TenantSchema, 'tenants'),
  };
}
