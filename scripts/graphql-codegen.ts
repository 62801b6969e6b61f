/**
 * GraphQL Code Generator: the TypeScript types of the GraphQL schema (src/http/graphql/schema.ts, read
 * from its `/* GraphQL *\/` template) and the `Resolvers` type that src/http/graphql/resolvers.ts is
 * held to (decision 1102). `npm run generate:graphql` writes src/http/graphql/generated/types.ts;
 * `npm run generate:graphql -- --check` writes nothing and exits 1 when that file is stale (a test runs it).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'src/http/graphql/schema.ts',
  generates: {
    'src/http/graphql/generated/types.ts': {
      plugins: [
        { add: { content: '// Generated from src/http/graphql/schema.ts: do not edit (npm run generate:graphql).' } },
        'typescript',
        'typescript-resolvers',
      ],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        contextType: '../context.js#GraphQLContext',
        mappers: {
          Me: '../models.js#MeModel',
          Group: '../models.js#GroupModel',
          PrivateServerConfig: '../models.js#PrivateServerConfigModel',
        },
        scalars: { ID: 'string' },
      },
    },
  },
};

export default config;
