// The GraphQL explorer at /graphql: GraphiQL 5 with its Monaco editors, bundled by esbuild from the
// installed packages (src/http/reference/graphiql.build.ts) and served by the service. Monaco's
// workers are files of the same bundle, started from this origin (worker-src falls back to 'self').
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';
import './graphiql.page.css';

const WORKERS = { json: 'json.worker.js', graphql: 'graphql.worker.js' };

globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    return new Worker(new URL(WORKERS[label] ?? 'editor.worker.js', import.meta.url));
  },
};

// POST application/json to this tenant host: Apollo's CSRF prevention lets such requests through
// (a browser sends them cross-origin only after a CORS preflight the service answers per tenant).
const fetcher = createGraphiQLFetcher({ url: new URL('/graphql', location.origin).href });

const DEFAULT_QUERY = `# Put your access token in the Headers tab below:
#   { "Authorization": "Bearer <access token>" }
query Me {
  me {
    id
    displayName
    permissions
  }
}
`;

createRoot(document.getElementById('graphiql')).render(
  createElement(GraphiQL, {
    fetcher,
    defaultQuery: DEFAULT_QUERY,
    defaultHeaders: '{\n  "Authorization": "Bearer "\n}',
    shouldPersistHeaders: true,
    defaultEditorToolsVisibility: 'headers',
  }),
);
