/**
 * Layer boundaries (docs/architecture.md "Layers"), checked in CI by `npm run boundaries`.
 * Transports: src/http, src/hub, src/telemetry's gRPC server, src/workers, the realm's pages (src/auth/idp).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-no-transport',
      severity: 'error',
      comment:
        'Core services are transport-neutral: they never import a transport (REST, GraphQL, hub, gRPC, jobs) or the edge.',
      from: { path: '^src/core/' },
      to: { path: '^src/(http|hub|workers|edge)/|^src/telemetry/telemetry\\.(server|role)' },
    },
    {
      name: 'data-imports-no-core-rules',
      severity: 'error',
      comment: 'The data layer stores and queries; rules live in core. It imports nothing of core.',
      from: { path: '^src/data/' },
      to: { path: '^src/core/' },
    },
    {
      name: 'spreadsheet-imports-only-error-codes',
      severity: 'error',
      comment:
        'The xlsx reader (src/spreadsheet: yauzl, saxes and the cell rules; decision 1113) is a module of its own: it imports nothing of the project but the error catalogue (src/kernel/errors.ts).',
      from: { path: '^src/spreadsheet/' },
      to: { path: '^src/', pathNot: '^src/spreadsheet/|^src/kernel/errors\\.ts$' },
    },
    {
      name: 'services-build-no-repository',
      severity: 'error',
      comment:
        'Core and auth services take repository factories from the composition root (the *.wiring.ts files and auth-services.ts); they import repository types only. Files still building their own are listed in .dependency-cruiser-known-violations.json until converted.',
      from: { path: '^src/(core|auth|telemetry)/', pathNot: '(\\.wiring|auth-services)\\.ts$' },
      to: {
        path: '^src/data/repositories/',
        pathNot: '^src/data/repositories/(duplicate-keys|bulk-updates|transition-claim)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'actors-and-telemetry-import-no-hub',
      severity: 'error',
      comment: 'Actors and the telemetry ingest push through src/realtime, never through the hub.',
      from: { path: '^src/(actors|telemetry)/' },
      to: { path: '^src/hub/' },
    },
    {
      name: 'transports-build-no-repository',
      severity: 'error',
      comment:
        'Transports receive services from the composition root; they never reach repositories (record types included).',
      from: { path: '^src/(http|hub|workers)/|^src/auth/idp/' },
      to: { path: '^src/data/repositories/' },
    },
    {
      name: 'services-use-no-raw-redis',
      severity: 'error',
      comment:
        'Services use Redis through the stores of src/data/stores (decision 975); only the composition files (auth-services.ts, telemetry.wiring.ts) build them, so nothing else imports src/data/redis.ts, not even its types.',
      from: {
        path: '^src/(auth|telemetry)/',
        pathNot: '^src/auth/auth-services\\.ts$|^src/telemetry/telemetry\\.wiring\\.ts$',
      },
      to: { path: '^src/data/redis\\.ts$' },
    },
    {
      name: 'core-uses-redis-through-stores',
      severity: 'error',
      comment:
        'Core services use Redis through the stores of src/data/stores (scripts, keys, commands; decision 970); they import neither the Redis client nor the key names, not even their types. The composition files (src/core/*.wiring.ts) build the stores.',
      from: { path: '^src/core/', pathNot: '\\.wiring\\.ts$' },
      to: { path: '^src/data/redis(-keys)?\\.ts$' },
    },
    {
      name: 'transports-use-no-raw-redis',
      severity: 'error',
      comment: 'Transports get Redis connections from infra (connectRedis) and use Redis through services and stores.',
      from: { path: '^src/(http|hub|workers)/', pathNot: '^src/workers/job-queues\\.ts$' },
      to: { path: '^src/data/redis\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
    exclude: { path: '\\.test\\.ts$' },
  },
};
