// The Node.js that the project's own commands run on (decision 1060). `npm start`, `npm test`,
// `npm run bench` and CI run the service, its child nodes and the suite on a release inside `engines`
// (package.json): the machine's Node.js when it is one, else the development line, Node.js 24, fetched
// once from the npm registry's `node-<platform>-<arch>` package (the binaries the registry's `node`
// package installs) into .local/node/v<version>/, and the command starts again on it with that directory
// first on PATH (so `npm`, `npx` and every `node` they start run on it too). LOCAL_NODE picks otherwise:
// `24` or `22` (that line, fetched when the machine has another), `machine` (the machine's Node.js,
// whatever it is). Dependency-free: it runs before `npm install`.
//
// As a command: `node scripts/node-line.mjs [24|22]` prints the path of that line's binary (fetched
// when needed); `--bin-dir` prints its directory, for `export PATH="$(...):$PATH"`.
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const localDir = path.join(root, '.local');

/** The exact release of each line the project fetches (the newest of the registry's on the day it was pinned). */
export const NODE_RELEASES = { 24: '24.22.3', 22: '22.23.5' };
/** The line development, CI and the image run on (Dockerfile: node:24). */
export const DEVELOPMENT_LINE = 24;

/** `engines.node` of package.json, e.g. `^22.15.0 || ^24.11.0`. */
export function engines() {
  return JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines?.node ?? '';
}

/**
 * Whether `version` (e.g. `v20.20.2`) is inside `range`, a list of caret ranges joined by `||` (the only
 * form engines uses; src/config/node-lines.ts reads the same field the same way).
 */
export function inEngines(version, range = engines()) {
  const v = version.replace(/^v/, '').split(/[.-]/).slice(0, 3).map(Number);
  return range.split('||').some((part) => {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!m) return false;
    const from = m.slice(1, 4).map(Number);
    if (v[0] !== from[0]) return false;
    for (let i = 1; i < 3; i++) if (v[i] !== from[i]) return v[i] > from[i];
    return true;
  });
}

const major = (version) => Number(version.replace(/^v/, '').split('.')[0]);

/** Where the project keeps the fetched release `version`. */
export function fetchedNodePath(version) {
  return path.join(localDir, 'node', `v${version}`, 'bin', 'node');
}

/**
 * Path of a Node.js binary of `line` (22 or 24): the running one when it is of that line and inside
 * engines, else the pinned release under .local/node, fetched once (about 50 MB, 5-15 s) with `npm pack`
 * of the registry's platform package and unpacked beside, then renamed into place (a reader never sees
 * half a tree; concurrent fetchers each unpack their own and the first rename wins).
 */
export function nodeBinary(line = DEVELOPMENT_LINE) {
  if (major(process.version) === line && inEngines(process.version)) return process.execPath;
  const version = NODE_RELEASES[line];
  if (!version) throw new Error(`no Node.js ${line} release is pinned in scripts/node-line.mjs (lines: 22, 24)`);
  const bin = fetchedNodePath(version);
  if (existsSync(bin)) return bin;
  const started = Date.now();
  const target = path.dirname(path.dirname(bin));
  mkdirSync(path.dirname(target), { recursive: true });
  const tmp = mkdtempSync(`${target}.tmp-`);
  try {
    const pkg = `node-${process.platform}-${process.arch}@${version}`;
    const packed = spawnSync('npm', ['pack', pkg, '--silent', '--pack-destination', tmp], {
      cwd: tmp,
      encoding: 'utf8',
    });
    const file = packed.stdout?.trim().split('\n').pop();
    if (packed.status !== 0 || !file)
      throw new Error(`npm pack ${pkg} failed: ${`${packed.stderr}`.trim().split('\n').pop()}`);
    const tree = path.join(tmp, 'tree');
    mkdirSync(tree);
    const unpacked = spawnSync('tar', ['-xzf', path.join(tmp, file), '-C', tree, '--strip-components=1'], {
      encoding: 'utf8',
    });
    if (unpacked.status !== 0) throw new Error(`unpacking ${file} failed: ${unpacked.stderr.trim()}`);
    const probe = spawnSync(path.join(tree, 'bin', 'node'), ['-p', 'process.version'], { encoding: 'utf8' });
    if (probe.stdout?.trim() !== `v${version}`) throw new Error(`${pkg} did not run (${probe.stderr?.trim()})`);
    try {
      renameSync(tree, target);
    } catch (e) {
      if (!existsSync(bin)) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  process.stderr.write(
    `[node] fetched Node.js ${version} into ${path.relative(root, target)} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  return bin;
}

/**
 * The binary this command should run on, or null when it already runs on it: LOCAL_NODE=22|24 asks for
 * that line, `machine` for the running Node.js; otherwise the running Node.js when it is inside engines,
 * else the development line.
 */
export function wantedNode(env = process.env) {
  const asked = env.LOCAL_NODE;
  if (asked === 'machine') return null;
  if (asked && asked !== '22' && asked !== '24')
    throw new Error(`LOCAL_NODE must be 22, 24 or machine (got ${JSON.stringify(asked)})`);
  const line = asked ? Number(asked) : inEngines(process.version) ? null : DEVELOPMENT_LINE;
  if (line === null) return null;
  const bin = nodeBinary(line);
  return bin === process.execPath ? null : bin;
}

/**
 * Makes the calling command (`tag`: start, test, bench) run on a supported Node.js: returns at once when
 * it does; otherwise starts the same command again on the wanted binary, with its directory first on
 * PATH, says so in one line, and exits with that run's status (this process never returns).
 */
export async function runOnSupportedNode(tag) {
  let bin;
  try {
    bin = wantedNode();
  } catch (e) {
    process.stderr.write(`[${tag}] cannot get a supported Node.js: ${e.message}\n`);
    process.exit(1);
  }
  if (!bin) return;
  const version = spawnSync(bin, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
  const why = process.env.LOCAL_NODE
    ? `LOCAL_NODE=${process.env.LOCAL_NODE}`
    : `this machine's Node.js ${process.version} is outside engines (${engines()})`;
  process.stderr.write(`[${tag}] running on Node.js ${version} (${path.relative(root, bin)}): ${why}\n`);
  const child = spawn(bin, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: {
      ...process.env,
      LOCAL_NODE: 'machine',
      // The machine's own Node.js, for a command that measures it beside the supported line (the bench).
      MACHINE_NODE: process.env.MACHINE_NODE || process.execPath,
      PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
    },
  });
  // Ctrl+C reaches both processes (one process group); a signal sent to this one alone is passed on.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  const code = await new Promise((resolve) => {
    child.once('error', (e) => {
      process.stderr.write(`[${tag}] could not run ${bin}: ${e.message}\n`);
      resolve(1);
    });
    child.once('exit', (c, signal) => resolve(c ?? 128 + (constants.signals[signal] ?? 1)));
  });
  process.exit(code);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const line = Number(args.find((a) => /^\d+$/.test(a)) ?? DEVELOPMENT_LINE);
  try {
    const bin = nodeBinary(line);
    process.stdout.write(`${args.includes('--bin-dir') ? path.dirname(bin) : bin}\n`);
  } catch (e) {
    process.stderr.write(`[node] ${e.message}\n`);
    process.exit(1);
  }
}
