import { Router } from 'express';
import { openApiDocument } from './openapi.js';
import { DOCS_PAGE } from './docs.page.js';
import { pageCsp } from '../middleware/security-headers.js';

/** /api/docs: the OpenAPI document and a small self-contained page to read and try it (no CDN). */
export function docsRouter(): Router {
  const r = Router();
  let doc: string | undefined;
  r.get('/openapi.json', (_req, res) => {
    doc ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(doc);
  });
  // Its inline script and style are allowed by hash, not by 'unsafe-inline'.
  r.get('/', pageCsp(DOCS_PAGE), (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  return r;
}
