/**
 * Regenerates docs/api/openapi.json and docs/api/schema.graphql from the code:
 * `npx tsx src/http/openapi/write-docs.ts`. The directory tests fail until the checked-in files match.
 */
import { writeFileSync } from 'node:fs';
import { buildSchema, printSchema } from 'graphql';
import { openApiDocument } from './openapi.js';
import { typeDefs } from '../graphql/schema.js';

const root = new URL('../../../docs/api/', import.meta.url);
writeFileSync(new URL('openapi.json', root), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
writeFileSync(new URL('schema.graphql', root), `${printSchema(buildSchema(typeDefs))}\n`);
