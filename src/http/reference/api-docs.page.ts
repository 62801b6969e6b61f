/**
 * The REST reference page: Swagger UI from the swagger-ui-dist package, served by the service itself
 * (decision 710). No inline script or style, so the base Content-Security-Policy holds unchanged.
 */
export const API_DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/assets/favicon-32x32.png">
</head><body>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/init.js"></script>
</body></html>`;
