import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json', diagnostics: false });

/** Jest runs TypeScript as ESM so ESM-only packages (openid-client, oidc-provider, jose) load unmocked. */
const base = {
  ...preset,
  // jest's node environment, failing a file that leaves sockets, servers, timers or processes running.
  testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testTimeout: 60_000,
  // The fleet day (decision 1080) runs alone, as `test:all`'s last run (scripts/test.mjs sets FLEET_DAY=1
  // for it), or when asked (FLEET_DAY=1, soak); a jest run of everything else leaves it out.
  testPathIgnorePatterns: [
    '/node_modules/',
    ...(process.env.FLEET_DAY === '1' || process.env.SOAK === '1'
      ? []
      : ['/test/resilience/faults/fleet-day\\.test\\.ts$']),
  ],
};

/**
 * The multi-node tests repeated on a three-master Redis Cluster (decision 860): hub across nodes, actor
 * failover and fencing, the chaos run, BullMQ workers, and the multi-key commands of the key catalogue.
 * A CROSSSLOT refusal anywhere fails them.
 */
export const REDIS_CLUSTER_TESTS = [
  'test/e2e/hub/cross-node.test.ts',
  'test/e2e/hub/failover.test.ts',
  'test/e2e/hub/push-recovery.test.ts',
  'test/e2e/actors/failover.test.ts',
  'test/e2e/actors/fencing.test.ts',
  'test/e2e/actors/eviction.test.ts',
  'test/resilience/faults/chaos.test.ts',
  'test/resilience/faults/fleet-day.test.ts',
  'test/integration/workers/worker-crash.test.ts',
  'test/integration/workers/recording.test.ts',
  'test/integration/data/redis-slots.test.ts',
];

export default {
  maxWorkers: 2,
  // How long jest lets a worker it asked to end take before killing it and printing "A worker process
  // has failed to exit gracefully" (its default is 500 ms). A worker that nothing holds ends its event
  // loop at once, but the system's teardown of a process of about 1 GB took longer than 500 ms on the
  // loaded 2-core machine, so jest printed that with nothing left open (decision 991). A worker something
  // does hold is named by the leak check 200 ms after jest's request (test/support/leak-check-environment.ts).
  workerGracefulExitTimeout: 5_000,
  // A worker grows by tens of MB per test file (each file loads the service anew in its own module
  // context); jest restarts one whose heap passed this after a file, which keeps workers, the machine's
  // memory and the workers' final teardown small.
  workerIdleMemoryLimit: '768MB',
  // Jest reads the time limit from the top level when there are projects.
  testTimeout: base.testTimeout,
  projects: [
    {
      ...base,
      testMatch: ['**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...base,
      displayName: 'redis-cluster',
      testMatch: REDIS_CLUSTER_TESTS.map((f) => `<rootDir>/${f}`),
      globalSetup: '<rootDir>/test/support/redis-cluster-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/redis-cluster-env.ts'],
    },
  ],
};
