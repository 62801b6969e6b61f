// Starts Swagger UI on /api/docs. A served file, not an inline script, so the page keeps the
// service's Content-Security-Policy (script-src 'self', no 'unsafe-inline').
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/api/docs/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // Requests go to the host the page came from: that host names the tenant.
  tryItOutEnabled: true,
  persistAuthorization: true,
  displayRequestDuration: true,
  filter: true,
  // The public validator would be fetched from elsewhere; the document is checked in CI instead.
  validatorUrl: null,
});
