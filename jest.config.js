import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json', diagnostics: false });

/** Jest runs TypeScript as ESM so ESM-only packages (openid-client, oidc-provider, jose) load unmocked. */
export default {
  ...preset,
  // jest's node environment, failing a file that leaves sockets, servers, timers or processes running.
  testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
