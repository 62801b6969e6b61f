/**
 * How the harness runs its product nodes (decision 980). By default as production and `npm start`
 * run the service (decision 830): compiled JavaScript with plain `node`, no TypeScript loader in the
 * process. The node's host (host.ts), its hosted module (product-node.ts), the fixtures and the test
 * support they load (hostedSources) are transpiled the way `npm run build` transpiles src/ (esbuild, one file each)
 * into bench/.build/, whose `src` is a link to dist/: their imports of `../../src/x.js` load dist/x.js,
 * the very modules `npm start` runs. `BENCH_RUNTIME=tsx` runs the TypeScript sources through tsx instead
 * (how the harness ran before, for comparison). Baselines and load generators stay on tsx.
 *
 * A stale build cannot be measured: the first compiled node of a process builds dist/ when its sources'
 * fingerprint changed (scripts/build.mjs ensureBuilt) and transpiles the bench files afresh (a few
 * files, milliseconds), whatever bench/.build/ held before.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { benchRoot, projectRoot } from './paths.js';
import { NODE_FLAGS } from '../../scripts/node-flags.mjs';

export type Runtime = 'compiled' | 'tsx';

export const RUNTIMES: readonly Runtime[] = ['compiled', 'tsx'];

/** Where the transpiled bench files go (git-ignored); `src` in it links to dist/. */
export const buildDir = path.join(benchRoot, '.build');

/** Where a compiled product node starts: the host and the module it hosts. */
const HOSTED_ENTRIES = ['bench/harness/host.ts', 'bench/harness/product-node.ts'];

/** A quoted relative `.js` specifier: static and dynamic imports, re-exports, and specifiers kept in a constant. */
const RELATIVE_JS = /['"](\.{1,2}\/[^'"\s]+\.js)['"]/g;

/**
 * What a compiled product node loads from the project outside src/ (relative to the project root): the
 * entries and every TypeScript file they reach by a relative specifier, src/ left out (dist/ serves
 * it). Read from the sources, so a fixture that starts importing another test-support file is
 * compiled with it.
 */
export function hostedSources(): string[] {
  const srcDir = path.join(projectRoot, 'src') + path.sep;
  const seen = new Set<string>();
  const queue = [...HOSTED_ENTRIES];
  while (queue.length) {
    const rel = queue.shift()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const file = path.join(projectRoot, rel);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(RELATIVE_JS)) {
      const target = path.resolve(path.dirname(file), spec!.replace(/\.js$/, '.ts'));
      if (target.startsWith(srcDir) || !existsSync(target)) continue;
      queue.push(path.relative(projectRoot, target));
    }
  }
  return [...seen].sort();
}

/** The runtime product nodes use in this process: `BENCH_RUNTIME` (compiled by default). */
export function productRuntime(env: NodeJS.ProcessEnv = process.env): Runtime {
  const v = (env.BENCH_RUNTIME ?? '').trim() || 'compiled';
  if (!(RUNTIMES as readonly string[]).includes(v))
    throw new Error(`BENCH_RUNTIME must be one of ${RUNTIMES.join(', ')} (got '${v}')`);
  return v as Runtime;
}

/**
 * The Node.js flags of the run's product nodes: the product's own (scripts/node-flags.mjs, as `npm start`
 * and the image run them), or `BENCH_PRODUCT_NODE_FLAGS` (space-separated; empty: none) to measure others.
 */
export function productNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const given = env.BENCH_PRODUCT_NODE_FLAGS;
  return given === undefined ? [...NODE_FLAGS] : given.split(/\s+/).filter(Boolean);
}

/** How a run's product nodes ran, in words (the results header and report settings). */
export function describeRuntime(runtime: Runtime, flags: string[] = []): string {
  const node = ['node', '--expose-gc', ...flags].join(' ');
  const own = NODE_FLAGS.join(' ');
  const as = flags.join(' ') === own ? 'as `npm start` runs it' : `\`npm start\` runs it with ${own || 'no flags'}`;
  return runtime === 'compiled'
    ? `compiled JavaScript (dist/ from \`npm run build\`) with plain \`${node}\`, ${as}`
    : `TypeScript sources through tsx (\`${node} --import tsx\`)`;
}

/** Path in bench/.build of the compiled form of `rel` (a .ts path relative to the project root). */
export function compiledPath(rel: string): string {
  return path.join(buildDir, rel.replace(/\.ts$/, '.js'));
}

interface BuildScript {
  ensureBuilt(opts?: { force?: boolean }): Promise<{ built: boolean; modules?: number; ms?: number }>;
}
interface ServicesScript {
  localDir: string;
  takeLock(lock: string, what: string, timeoutMs?: number): Promise<() => void>;
}

let compiling: Promise<{ distBuilt: boolean }> | undefined;

/**
 * Makes dist/ current and transpiles hostedSources() into bench/.build/ (once per process; concurrent
 * harnesses of one checkout take turns on a lock, and each replaces the directory whole).
 */
export function ensureCompiled(): Promise<{ distBuilt: boolean }> {
  compiling ??= compile().catch((e: unknown) => {
    compiling = undefined;
    throw e;
  });
  return compiling;
}

async function compile(): Promise<{ distBuilt: boolean }> {
  const buildScript = path.join(projectRoot, 'scripts', 'build.mjs');
  const servicesScript = path.join(projectRoot, 'scripts', 'services.mjs');
  const { ensureBuilt } = (await import(buildScript)) as BuildScript;
  const { localDir, takeLock } = (await import(servicesScript)) as ServicesScript;
  const dist = await ensureBuilt();
  const { build } = await import('esbuild');
  mkdirSync(localDir, { recursive: true });
  const release = await takeLock(path.join(localDir, 'bench-build.lock'), 'transpiling the bench host');
  const tmp = `${buildDir}.tmp-${process.pid}`;
  try {
    rmSync(tmp, { recursive: true, force: true });
    await build({
      entryPoints: hostedSources().map((f) => path.join(projectRoot, f)),
      outdir: tmp,
      outbase: projectRoot,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: path.join(projectRoot, 'tsconfig.json'),
      logLevel: 'warning',
    });
    // Relative, so the checkout can move; Node resolves it to dist/'s real paths (one module graph).
    symlinkSync(path.relative(tmp, path.join(projectRoot, 'dist')), path.join(tmp, 'src'), 'dir');
    const old = `${buildDir}.old-${process.pid}`;
    if (existsSync(buildDir)) renameSync(buildDir, old);
    renameSync(tmp, buildDir);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    release();
  }
  return { distBuilt: dist.built };
}
