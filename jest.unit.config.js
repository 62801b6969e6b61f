import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json', diagnostics: false });

/**
 * The service tests on in-memory fakes alone (decision 1123), without the global set-up that finds or
 * starts Redis and the MongoDB-protocol server: a rule is checked in seconds on a machine with neither.
 * `npm test` runs the same files in its own project (jest.config.js) with the rest of the suite.
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js -c jest.unit.config.js [files]
 */
export default {
  ...preset,
  testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  roots: ['<rootDir>/src'],
  testMatch: ['<rootDir>/src/core/**/*.service.test.ts'],
  testTimeout: 10_000,
};
