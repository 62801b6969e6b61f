// `npm run tenant|keys|audit-verify|telemetry|webhooks -- ...`: runs a command-line tool from the compiled
// build (dist/, decision 830) with plain `node`, building it first when src/ changed since the last build
// (about a second), so a call costs a Node.js start instead of a TypeScript compile (tsx). Without a
// compiler (esbuild missing) the sources run through tsx as before.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each tool's module under src/ (and dist/ with .js). */
export const TOOLS = {
  tenant: 'cli/tenant.cli',
  keys: 'cli/keys.cli',
  'audit-verify': 'cli/audit-verify.cli',
  telemetry: 'cli/telemetry.cli',
  webhooks: 'cli/webhooks.cli',
};

/** The node arguments that run `tool`: the compiled module when the build is (or can be made) current. */
export async function commandFor(tool) {
  const mod = TOOLS[tool];
  if (!mod) throw new Error(`unknown tool '${tool}' (one of ${Object.keys(TOOLS).join(', ')})`);
  try {
    const { ensureBuilt } = await import('./build.mjs');
    const built = await ensureBuilt();
    if (built.built)
      process.stderr.write(`[${tool}] compiled src/ into dist/ (${built.modules} modules, ${built.ms} ms)\n`);
    const compiled = path.join(root, 'dist', `${mod}.js`);
    if (existsSync(compiled)) return [compiled];
  } catch (e) {
    process.stderr.write(`[${tool}] running the sources through tsx: the build is unavailable (${e.message})\n`);
  }
  return ['--import', 'tsx', path.join(root, 'src', `${mod}.ts`)];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [tool, ...args] = process.argv.slice(2);
  let entry;
  try {
    entry = await commandFor(tool);
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(64);
  }
  const child = spawn(process.execPath, [...entry, ...args], { stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
