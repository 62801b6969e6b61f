import type { Infra } from './infra.js';
import { TenantRepository } from './data/repositories/tenant.repository.js';
import { TenantService } from './core/tenant.service.js';
import { createAuthServices } from './auth/auth-services.js';
import { createTelemetryServices } from './telemetry/telemetry.wiring.js';
import { createDirectoryServices } from './core/directory.wiring.js';
import { createMediaServices } from './core/media.wiring.js';

/**
 * The composition root: every domain service, wired from infra. Transports, actors and workers
 * receive this object and never construct services themselves.
 */
export function createServices(infra: Infra) {
  const tenantRepo = new TenantRepository(infra.mongo.catalog);
  const tenants = new TenantService({ mongo: infra.mongo, tenants: tenantRepo });
  const auth = createAuthServices(infra);
  const telemetry = createTelemetryServices(infra, tenants, tenantRepo);
  return {
    tenantRepo,
    tenants,
    auth,
    ...createDirectoryServices(infra, { vcs: () => telemetry.vcs }),
    ...telemetry,
    ...createMediaServices(infra),
  };
}

export type Services = ReturnType<typeof createServices>;
