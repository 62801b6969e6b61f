import { Router } from 'express';
import { openApiDocument } from './openapi.js';
import { DOCS_PAGE } from './docs.page.js';

/** /api/docs: the OpenAPI document and a small self-contained page to read and try it (no CDN). */
export function docsRouter(): Router {
  const r = Router();
  let doc: string | undefined;
  r.get('/openapi.json', (_req, res) => {
    doc ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(doc);
  });
  r.get('/', (_req, res) => {
    res.setHeader('Content-Security-Policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'");
    res.type('html').send(DOCS_PAGE);
  });
  return r;
}
