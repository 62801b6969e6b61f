import { AppError } from '../../../kernel/errors.js';
import { constantTimeEqual } from '../../../kernel/secrets.js';
import { op, type RouteGroup } from '../route-spec.js';
import { MigrateBody, MigrateParams, MigrateQuery, MigrateResult } from './admin.schema.js';

/**
 * Provisioning: POST /api/admin/migrate/{tenantName}?code= creates the tenant when missing and runs
 * its migrations. Authenticated by the provisioning code, not by a user token; served on any host.
 */
export const adminMigrateRoutes: RouteGroup = {
  base: '/api/admin',
  tag: 'Admin helpers',
  routes: [
    op({
      operationId: 'admin.migrate',
      requires: 'public',
      note: 'proved by the provisioning code',
      method: 'post',
      path: '/migrate/:tenantName',
      params: MigrateParams,
      query: MigrateQuery,
      body: MigrateBody,
      response: MigrateResult,
      anyHost: true,
      summary:
        'Create the tenant when missing and run its database migrations (provisioning service; proved by the provisioning code)',
      errors: ['forbidden', 'conflict'],
      handle: async (s, { params, query, body, infra }) => {
        if (!constantTimeEqual(query.code, infra.config.auth.provisioningCode))
          throw new AppError('forbidden', 'Invalid provisioning code');
        const result = await s.tenants.ensure(
          { name: params.tenantName, displayName: body?.displayName },
          'provisioning',
        );
        const admin = body?.admin
          ? await s.auth.accountSetup.provision(
              params.tenantName,
              { ...body.admin, role: 'admin' },
              'first-admin',
              'provisioning',
            )
          : undefined;
        return { tenant: params.tenantName, ...result, ...(admin ? { admin } : {}) };
      },
    }),
  ],
};
