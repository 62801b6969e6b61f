// `npm run build:explorer`: builds the GraphQL explorer's bundle ahead of time (npm start, npm test
// and the image build run it; a node that finds none builds it on first use).
import { buildExplorer } from './graphiql.build.js';

const started = Date.now();
const dir = await buildExplorer();
process.stdout.write(`GraphQL explorer bundle: ${dir} (${Date.now() - started} ms)\n`);
