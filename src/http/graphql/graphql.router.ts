import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import { Router } from 'express';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Services } from '../../app/index.js';
import { ERROR_CODES, isAppError, toAppError, type ErrorCode } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import { requireTenant } from '../middleware/tenant.js';
import { buildContext, type GraphQLContext } from './context.js';
import { queryLimits } from './limits.js';
import { MAX_TOKENS, requestGuards } from './guards.js';
import { resolvers } from './resolvers.js';
import { typeDefs } from './schema.js';
import { explorerRouter } from '../reference/explorer.router.js';

/** Apollo's own failure codes mapped onto the service's codes, so clients branch on one list. */
const APOLLO_CODES: Record<string, ErrorCode> = {
  GRAPHQL_PARSE_FAILED: 'bad_request',
  GRAPHQL_VALIDATION_FAILED: 'validation_failed',
  BAD_USER_INPUT: 'validation_failed',
  BAD_REQUEST: 'bad_request',
  PERSISTED_QUERY_NOT_SUPPORTED: 'bad_request',
  OPERATION_RESOLUTION_FAILURE: 'bad_request',
};

/** Every GraphQL error carries `extensions.code` = an AppError code (and status); internals never leak. */
export function formatError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const unwrapped = unwrapResolverError(error);
    // Guards throw GraphQLErrors around an AppError (./guards.ts) or with a registered code of their own (./cost.ts).
    const original =
      unwrapped instanceof GraphQLError && isAppError(unwrapped.originalError) ? unwrapped.originalError : unwrapped;
    const ownCode = original instanceof GraphQLError ? (original.extensions?.code as string | undefined) : undefined;
    if (ownCode && ownCode in ERROR_CODES && ownCode !== 'internal') {
      const code = ownCode as ErrorCode;
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code, status: ERROR_CODES[code].status },
      };
    }
    const apolloCode = formatted.extensions?.code as string | undefined;
    if (!isAppError(original) && apolloCode && APOLLO_CODES[apolloCode]) {
      const code = APOLLO_CODES[apolloCode]!;
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code, status: ERROR_CODES[code].status },
      };
    }
    // graphql-js's own request errors (a mutation or subscription on a schema without that root type) carry no code.
    if (original instanceof GraphQLError && !original.originalError) {
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: 'bad_request', status: ERROR_CODES.bad_request.status },
      };
    }
    const e = toAppError(original);
    if (e.code === 'internal') logger.error({ component: 'graphql', err: original }, 'resolver failed');
    return {
      message: e.code === 'internal' ? 'An unexpected error occurred' : e.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: e.code, status: e.status, ...(e.errors ? { errors: e.errors } : {}) },
    };
  };
}

/** Adds the request's correlation id to every error, like REST problem documents. */
const correlationPlugin: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ contextValue, response }) {
        if (response.body.kind === 'single' && response.body.singleResult.errors) {
          response.body.singleResult.errors = response.body.singleResult.errors.map((e) => ({
            ...e,
            extensions: { ...e.extensions, correlationId: contextValue.correlationId },
          }));
        }
      },
    };
  },
};

/**
 * POST /graphql on tenant hosts (and GraphiQL for browsers, ../reference/explorer.router.ts). Apollo starts in the background so the router can be mounted
 * synchronously with the REST routers; requests wait for it.
 */
export function graphqlRouter(
  services: Services,
  logger: Logger,
  opts: { timeBudgetMs: number; pageMaxTake: number },
): Router {
  const server = new ApolloServer<GraphQLContext>({
    typeDefs,
    resolvers,
    parseOptions: { maxTokens: MAX_TOKENS },
    validationRules: [queryLimits],
    formatError: formatError(logger),
    includeStacktraceInErrorResponses: false,
    // Refuses GET and simple-form POSTs that carry neither a JSON content type nor a preflight header.
    csrfPrevention: true,
    plugins: [ApolloServerPluginLandingPageDisabled(), correlationPlugin, requestGuards(opts)],
  });
  server.startInBackgroundHandlingStartupErrorsByLoggingAndFailingAllRequests();
  const r = Router();
  r.use('/', explorerRouter());
  r.use('/', requireTenant, expressMiddleware(server, { context: async ({ req }) => buildContext(services, req) }));
  return r;
}
