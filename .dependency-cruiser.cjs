/**
 * Layer boundaries (docs/architecture.md "Layers"), checked in CI by `npm run boundaries`.
 * Transports: src/http, src/hub, src/telemetry's gRPC server, src/workers, the realm's pages (src/idp).
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
      name: 'kernel-imports-nothing-above',
      severity: 'error',
      comment:
        'The shared kernel (error catalogue, principal and caller, permissions, secrets, ids) is the floor every layer may import: it imports nothing else of src/.',
      from: { path: '^src/kernel/' },
      to: { path: '^src/', pathNot: '^src/kernel/' },
    },
    {
      name: 'contracts-import-only-kernel',
      severity: 'error',
      comment:
        'The wire contracts (hub requests and pushes, signalling, the telemetry proto and its schema) describe what clients and peers exchange: they import the kernel only, never a service, actor or store.',
      from: { path: '^src/contracts/' },
      to: { path: '^src/', pathNot: '^src/(contracts|kernel)/' },
    },
    {
      name: 'config-imports-nothing-above',
      severity: 'error',
      comment:
        'The configuration is read before anything runs and by every layer: it imports only the kernel and the contracts (what it parses, such as TRUST_PROXY and the key-encryption key, lives in src/config).',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|kernel|contracts)/' },
    },
    {
      name: 'observability-imports-nothing-above',
      severity: 'error',
      comment:
        'Logging, metrics and tracing are used by every layer: they import only the configuration and the floor.',
      from: { path: '^src/observability/' },
      to: { path: '^src/', pathNot: '^src/(observability|config|kernel|contracts)/' },
    },
    {
      name: 'storage-imports-nothing-above',
      severity: 'error',
      comment:
        'The object stores (fs, S3) are adapters: they import only the configuration, observability and the floor.',
      from: { path: '^src/storage/' },
      to: { path: '^src/', pathNot: '^src/(storage|observability|config|kernel|contracts)/' },
    },
    {
      name: 'vcs-imports-nothing-above',
      severity: 'error',
      comment:
        'The video conferencing adapters (embedded, LiveKit, the telemetry client) import only the layers below them: data (Redis), storage, observability, configuration and the floor; never core, actors or a transport.',
      from: { path: '^src/vcs/' },
      to: { path: '^src/', pathNot: '^src/(vcs|data|storage|observability|config|kernel|contracts)/' },
    },
    {
      name: 'realtime-and-core-import-no-actors',
      severity: 'error',
      comment:
        'Pushes (src/realtime) and the domain services (src/core) sit below the actors: they take wire types from src/contracts, never from an actor, its state or its messages.',
      from: { path: '^src/(realtime|core)/' },
      to: { path: '^src/actors/' },
    },
    {
      name: 'data-imports-no-auth',
      severity: 'error',
      comment:
        'The data layer sits below identity: it takes permissions and principals from the kernel, never from src/auth.',
      from: { path: '^src/data/' },
      to: { path: '^src/auth/' },
    },
    {
      name: 'auth-imports-no-core',
      severity: 'error',
      comment:
        'src/auth (keys, tokens, realms, the authorizer, revocations) sits below the domain: identity services in src/core/identity use it, never the other way (decision 1128).',
      from: { path: '^src/auth/' },
      to: { path: '^src/(core|actors|idp)/' },
    },
    {
      name: 'core-imports-no-transport',
      severity: 'error',
      comment:
        'Core services are transport-neutral: they never import a transport (REST, GraphQL, hub, gRPC, jobs) or the edge.',
      from: { path: '^src/core/' },
      to: { path: '^src/(http|hub|workers|edge|idp|app|cli|composition)/|^src/telemetry/' },
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
      name: 'qr-imports-only-error-codes',
      severity: 'error',
      comment:
        'The QR renderer (src/qr: qrcode in a worker thread) is a module of its own: it imports nothing of the project but the error catalogue (src/kernel/errors.ts).',
      from: { path: '^src/qr/' },
      to: { path: '^src/', pathNot: '^src/qr/|^src/kernel/errors\\.ts$' },
    },
    {
      name: 'only-composition-builds-repositories',
      severity: 'error',
      comment:
        'Only the composition (src/composition: one pass that builds every service, store and repository; decision 1125) constructs repositories; services take repository factories and import repository types only, and the data layer builds its own (migrations, seed). Files still building their own are listed in .dependency-cruiser-known-violations.json until converted.',
      from: { path: '^src/', pathNot: '^src/(composition|data)/' },
      to: {
        path: '^src/data/repositories/',
        pathNot: '^src/data/repositories/(duplicate-keys|bulk-updates|transition-claim)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'operation-table-is-a-view',
      severity: 'error',
      comment:
        'src/operations reads what every REST route, GraphQL operation and hub method declares it requires, for docs/permissions.md and the tests; transports enforce their own declarations and never read it back (decision 1127).',
      from: { path: '^src/', pathNot: '^src/operations/' },
      to: { path: '^src/operations/' },
    },
    {
      name: 'composition-imported-only-by-entries',
      severity: 'error',
      comment:
        'The composition (src/composition) is the top of the layers: only the process entries (src/main.ts and the commands in src/cli) and tests import it, types included; a role or transport takes what it receives by the types of src/app (RoleContext, Services, Infra; decision 1128).',
      from: { path: '^src/', pathNot: '^src/composition/|^src/main\\.ts$|^src/cli/' },
      to: { path: '^src/composition/' },
    },
    {
      name: 'app-is-types-only',
      severity: 'error',
      comment:
        "src/app is the application's shape (the types the composition hands every role, transport, actor and job): it imports types only, so depending on it loads no code (decision 1128).",
      from: { path: '^src/app/' },
      to: { path: '^src/', pathNot: '^src/app/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'app-imports-no-transport',
      severity: 'error',
      comment: "The application's shape sits below the transports and the composition: it names no type of theirs.",
      from: { path: '^src/app/' },
      to: { path: '^src/(http|hub|telemetry|workers|idp|cli|composition)/|^src/main\\.ts$' },
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
      from: { path: '^src/(http|hub|workers|idp)/' },
      to: { path: '^src/data/repositories/' },
    },
    {
      name: 'services-use-no-raw-redis',
      severity: 'error',
      comment:
        'Services use Redis through the stores of src/data/stores (decision 975); only the composition (src/composition) builds them, so nothing of auth or telemetry imports src/data/redis.ts, not even its types.',
      from: { path: '^src/(auth|telemetry)/' },
      to: { path: '^src/data/redis\\.ts$' },
    },
    {
      name: 'core-uses-redis-through-stores',
      severity: 'error',
      comment:
        'Core services use Redis through the stores of src/data/stores (scripts, keys, commands; decision 970); they import neither the Redis client nor the key names, not even their types. The composition (src/composition) builds the stores.',
      from: { path: '^src/core/' },
      to: { path: '^src/data/redis(-keys)?\\.ts$' },
    },
    {
      name: 'transports-use-no-raw-redis',
      severity: 'error',
      comment: 'Transports get Redis connections from infra (connectRedis) and use Redis through services and stores.',
      from: { path: '^src/(http|hub|workers)/', pathNot: '^src/data/job-queues\\.ts$' },
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
