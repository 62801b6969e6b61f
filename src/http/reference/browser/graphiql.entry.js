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
const send = createGraphiQLFetcher({ url: new URL('/graphql', location.origin).href });

/**
 * Headers worth sending: a header with no value, or an Authorization of a bare scheme ("Bearer " with
 * no token, what an empty template or an earlier visit leaves), is left out. The schema loads without a
 * token (introspection needs none); a token typed in the Headers tab goes with every request.
 */
function headersToSend(headers) {
  if (!headers || typeof headers !== 'object') return headers;
  return Object.fromEntries(
    Object.entries(headers).filter(([name, value]) => {
      const v = typeof value === 'string' ? value.trim() : value;
      if (v === '' || v === undefined || v === null) return false;
      return !(name.toLowerCase() === 'authorization' && /^[A-Za-z]+$/.test(String(v)));
    }),
  );
}

const fetcher = (params, opts) => send(params, { ...opts, headers: headersToSend(opts?.headers) });

const DEFAULT_QUERY = `# The schema is in the Docs pane without signing in. To run queries, put your access token in the
# Headers tab below:
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
    defaultHeaders: '{}',
    shouldPersistHeaders: true,
    defaultEditorToolsVisibility: 'headers',
  }),
);
