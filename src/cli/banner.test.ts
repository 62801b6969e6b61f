import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../config/config.js';
import { renderBanner } from './banner.js';
import { DEMO_USERS, DEMO_PASSWORD } from '../data/seed/demo.seed.js';
import { DEMO_MEETING_CODE } from '../data/seed/demo-content.seed.js';

describe('npm start banner', () => {
  it('prints the tenant URL, how to ping it, health URLs and every demo sign-in', () => {
    const text = renderBanner({
      config: loadConfig({ SEED_DEMO: 'true' }),
      url: 'http://127.0.0.1:8080',
      grpcPort: 50051,
    });
    expect(text).toContain('http://demo.localhost:8080');
    expect(text).toContain("curl -H 'Host: demo.localhost:8080' http://127.0.0.1:8080/api/tenant/ping");
    expect(text).toContain('http://127.0.0.1:8080/readyz');
    expect(text).toContain('http://127.0.0.1:8080/realms/demo');
    expect(text).toContain('/hubs/mobile');
    expect(text).toContain(`password "${DEMO_PASSWORD}"`);
    for (const u of DEMO_USERS) expect(text).toContain(u.username);
    expect(text).toContain(DEMO_MEETING_CODE);
    // The operator's queue dashboard (decision 841): where it is, and how it is switched on.
    expect(text).toContain('http://127.0.0.1:9464/queues');
    expect(text).toContain('QUEUE_DASHBOARD_TOKEN');
    expect(text).toContain('npm run webhooks -- listen');
  });

  it('names the queue dashboard on the metrics listener when its token is set', () => {
    const text = renderBanner({
      config: loadConfig({ SEED_DEMO: 'true', QUEUE_DASHBOARD_TOKEN: 'a-dashboard-token-of-20' }),
      url: 'http://127.0.0.1:8080',
      metricsUrl: 'http://127.0.0.1:39464',
    });
    expect(text).toMatch(
      /Queue dashboard +http:\/\/127\.0\.0\.1:39464\/queues +\(Basic authentication: any user name, QUEUE_DASHBOARD_TOKEN as the password\)/,
    );
    expect(text).not.toContain('a-dashboard-token-of-20');
  });

  it('shows only what the running roles serve, on the resolved port', () => {
    const text = renderBanner({
      config: loadConfig({
        ROLES: 'http',
        OIDC_MODE: 'external',
        OIDC_ISSUER_TEMPLATE: 'https://idp.example/realms/{tenant}',
      }),
      url: 'http://127.0.0.1:41234',
    });
    expect(text).toContain('http://demo.localhost:41234');
    expect(text).not.toContain('/hubs/mobile');
    expect(text).not.toContain('Identity realm');
    expect(text).not.toContain('Telemetry gRPC');
  });
});
