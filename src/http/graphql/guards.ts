import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, visit, type ASTNode, type DocumentNode } from 'graphql';
import { AppError, ERROR_CODES } from '../../kernel/errors.js';
import { controlCharPath } from '../../kernel/text-input.js';
import type { GraphQLContext } from './context.js';
import { checkCost } from './cost.js';

/** Largest document the parser reads (graphql-js `maxTokens`): 20 000 `__typename`s never reach validation. */
export const MAX_TOKENS = 5000;

function refused(code: 'validation_failed' | 'timeout', message: string, field?: string): GraphQLError {
  const e = new AppError(
    code,
    message,
    field ? { errors: [{ field, message: 'must not contain control characters' }] } : {},
  );
  return new GraphQLError(message, {
    originalError: e,
    extensions: { code, http: { status: ERROR_CODES[code].status } },
  });
}

/** The argument a string literal of the document belongs to (for the field name of the error). */
function argumentOf(ancestors: readonly (ASTNode | readonly ASTNode[])[]): string {
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as ASTNode;
    if (a && !Array.isArray(a) && a.kind === Kind.ARGUMENT) return a.name.value;
  }
  return 'query';
}

/** Control characters in variables or in string literals of the document, like REST and the hub. */
function refuseControlChars(document: DocumentNode, variables: Record<string, unknown> | undefined): void {
  const inVariables = controlCharPath(variables ?? {}, 'variables');
  if (inVariables)
    throw refused('validation_failed', `${inVariables}: must not contain control characters`, inVariables);
  let hit: string | undefined;
  visit(document, {
    StringValue(node, _key, parent, _path, ancestors) {
      if (!hit && controlCharPath(node.value) !== undefined) hit = argumentOf([...ancestors, parent as ASTNode]);
    },
  });
  if (hit) throw refused('validation_failed', `${hit}: must not contain control characters`, hit);
}

/**
 * The request guards that need the caller or the clock: control characters, the weighed cost against
 * the caller's budget (signed in or not), and the wall-clock budget of the resolvers (a field not
 * started within `timeBudgetMs` answers `timeout`, so a slow document stops issuing work).
 */
export function requestGuards(opts: { timeBudgetMs: number; pageMaxTake: number }): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      const deadline = performance.now() + opts.timeBudgetMs;
      return {
        async didResolveOperation({ document, request, contextValue, schema, operationName }) {
          refuseControlChars(document, request.variables);
          checkCost(
            schema,
            document,
            operationName ?? undefined,
            request.variables,
            Boolean(contextValue.principal),
            opts.pageMaxTake,
          );
        },
        async executionDidStart() {
          return {
            willResolveField() {
              if (performance.now() > deadline)
                throw new AppError('timeout', `The request's ${opts.timeBudgetMs} ms budget is spent`);
            },
          };
        },
      };
    },
  };
}
