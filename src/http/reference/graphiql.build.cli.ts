// `npm run build:explorer`: builds the browser bundles ahead of time — the GraphQL explorer's and the
// sign-in and QR approval pages' (npm start, npm test and the image build run it; a node that finds
// none builds them on first use).
import { buildExplorer } from './graphiql.build.js';
import { buildWebPages } from '../pages/web-pages.build.js';

const started = Date.now();
const dir = await buildExplorer();
process.stdout.write(`GraphQL explorer bundle: ${dir} (${Date.now() - started} ms)\n`);
const pagesStarted = Date.now();
const pages = await buildWebPages();
process.stdout.write(`Sign-in and approval pages bundle: ${pages} (${Date.now() - pagesStarted} ms)\n`);
