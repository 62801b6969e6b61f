import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json', diagnostics: false });

/** Jest runs TypeScript as ESM so ESM-only packages (openid-client, oidc-provider, jose) load unmocked. */
export default {
  ...preset,
  testEnvironment: 'node',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
