import type { Request } from 'express';
import type { Services } from '../../app/index.js';
import type { Principal } from '../../kernel/principal.js';
import type { ResolvedTenant } from '../../core/tenants/tenant.service.js';
import { GraphQLError } from 'graphql';
import { AppError } from '../../kernel/errors.js';
import { satisfies } from '../../kernel/requirement.js';
import { GRAPHQL_OPERATIONS, type GraphQLOperation } from './operations.js';
import { createLoaders, type Loaders } from './loaders.js';

export interface GraphQLContext {
  services: Services;
  tenant: ResolvedTenant;
  principal?: Principal;
  correlationId: string;
  loaders: Loaders;
  /** Results of argument-free fields within this request: aliases of `me` or of the QR code resolve once. */
  once<T>(key: string, load: () => Promise<T> | T): Promise<T>;
}

export function buildContext(services: Services, req: Request): GraphQLContext {
  if (!req.tenant) throw new AppError('tenant_not_found', 'GraphQL is served on tenant hosts');
  if (req.authError) {
    // A refused token: a GraphQL error response with the code, and the HTTP status of the refusal.
    const e = req.authError;
    throw new GraphQLError(e.message, {
      originalError: e,
      extensions: {
        code: e.code,
        status: e.status,
        http: {
          status: e.status,
          ...(e.status === 401 ? { headers: new Map([['www-authenticate', 'Bearer error="invalid_token"']]) } : {}),
        },
      },
    });
  }
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, load: () => Promise<T> | T): Promise<T> => {
    let hit = memo.get(key) as Promise<T> | undefined;
    if (!hit) memo.set(key, (hit = Promise.resolve().then(load)));
    return hit;
  };
  return {
    services,
    tenant: req.tenant,
    principal: req.principal,
    correlationId: req.correlationId,
    loaders: createLoaders(services, req.principal),
    once,
  };
}

/** The check of what one operation requires (operations.ts; the same errors as the REST guard). */
export function need(ctx: GraphQLContext, operation: GraphQLOperation): Principal {
  const required = GRAPHQL_OPERATIONS[operation].requires;
  if (required === 'public') return ctx.principal as Principal;
  if (!ctx.principal) throw new AppError('unauthenticated', 'Sign in to use this operation');
  if (!satisfies(required, ctx.principal.permissions))
    throw new AppError('permission_denied', `This operation requires the '${required}' permission`);
  return ctx.principal;
}
