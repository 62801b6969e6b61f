import { Router } from 'express';
import { openApiDocument } from './openapi.js';
import { API_DOCS_PAGE } from '../reference/api-docs.page.js';
import { BROWSER_DIR, packageDir, packageFiles } from '../reference/reference-assets.js';

/**
 * /api/docs: the OpenAPI document and Swagger UI (swagger-ui-dist's own files, served here: nothing
 * is fetched from elsewhere at run time) to read it and try each operation with a bearer token.
 */
export function docsRouter(): Router {
  const r = Router();
  let doc: string | undefined;
  r.get('/openapi.json', (_req, res) => {
    doc ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(doc);
  });
  r.get('/assets/init.js', (_req, res) => res.sendFile('api-docs.init.js', { root: BROWSER_DIR, maxAge: '1h' }));
  r.use(
    '/assets',
    packageFiles(packageDir('swagger-ui-dist'), ['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png']),
  );
  r.get('/', (_req, res) => {
    res.type('html').send(API_DOCS_PAGE);
  });
  return r;
}
