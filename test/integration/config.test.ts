import { describe, expect, it } from '@jest/globals';
import { loadConfig, ConfigError } from '../../src/config/config.js';

describe('configuration', () => {
  it('applies defaults', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(8080);
    expect(c.roles).toEqual(['http', 'hub', 'actors', 'workers', 'telemetry', 'idp']);
    expect(Object.isFrozen(c.http)).toBe(true);
  });

  it('reports every invalid setting at once', () => {
    try {
      loadConfig({ PORT: 'abc', ROLES: 'http,bogus', MONGODB_URI: 'postgres://x', STORAGE_DRIVER: 'ftp' });
      throw new Error('expected ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/ROLES/);
      expect(problems).toMatch(/MONGODB_URI/);
      expect(problems).toMatch(/STORAGE_DRIVER/);
    }
  });

  it('checks settings that depend on each other', () => {
    expect(() => loadConfig({ STORAGE_DRIVER: 's3', VCS_ADAPTER: 'livekit' })).toThrow(/S3_ENDPOINT[\s\S]*LIVEKIT/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PROVISIONING_CODE/);
  });
});
