/**
 * The leak check's verdict on a file that leaves a timer running (test/integration/leak-check.test.ts):
 * this child makes the environment as jest does, tells it a test failed when FIXTURE_FAILED=1, starts
 * an interval in the file's globals and tears the environment down. It prints `threw: <message>` or
 * `returned`; the environment's own report goes to stderr.
 */
import LeakCheckEnvironment from './leak-check-environment.js';

const env = new LeakCheckEnvironment(
  { globalConfig: {}, projectConfig: { testEnvironmentOptions: {} } } as never,
  { testPath: `${process.cwd()}/a-file.test.ts`, docblockPragmas: {}, console } as never,
);
await env.setup();
if (process.env.FIXTURE_FAILED === '1') env.handleTestEvent({ name: 'test_done', test: { errors: [new Error('x')] } });
const g = env.global as unknown as { setInterval(fn: () => void, ms: number): unknown };
g.setInterval(() => undefined, 1000);
try {
  await env.teardown();
  process.stdout.write('returned\n');
} catch (e) {
  process.stdout.write(`threw: ${(e as Error).message}\n`);
}
process.exit(0);
