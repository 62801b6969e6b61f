// A local Redis Cluster of three masters (no replicas) from Debian's redis-server, on loopback, for the
// tests that repeat the multi-node suites on a cluster (decision 860) and for trying REDIS_URL's cluster
// form by hand. Idempotent: a cluster already answering on the ports is reused; nodes that are down are
// started again with their data directory (their nodes.conf keeps the slot layout); the slots are
// assigned (redis-cli --cluster create) only when no node holds any yet. Same ACL user and password as
// the local single Redis (.local/redis-password), the default user off.
//   node scripts/redis-cluster.mjs          starts it (if needed) and prints its REDIS_URL
//   node scripts/redis-cluster.mjs --stop   stops the nodes this script started (by the pids it recorded)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LOCAL_REDIS_USER,
  ServiceError,
  aptInstall,
  daemon,
  localDir,
  localRedisPassword,
  log,
  portOpen,
  redisProbe,
  takeLock,
  waitFor,
  which,
} from './services.mjs';

/** Masters of the local cluster: LOCAL_REDIS_CLUSTER_PORT (default 6391) and the two ports after it. */
export function clusterPorts(base = Number(process.env.LOCAL_REDIS_CLUSTER_PORT ?? 6391)) {
  return [base, base + 1, base + 2];
}

const clusterDir = path.join(localDir, 'redis-cluster');

/** The cluster's REDIS_URL: every master listed, so a client finds the cluster from any that answers. */
export function clusterUrl(ports, auth) {
  const hosts = ports.map((p) => `127.0.0.1:${p}`).join(',');
  return `redis+cluster://${auth.user}:${encodeURIComponent(auth.password)}@${hosts}`;
}

/** redis-cli against one node; the password goes through the environment, not the command line. */
function cli(port, auth, args) {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '--user', auth.user, ...args], {
    encoding: 'utf8',
    env: { ...process.env, REDISCLI_AUTH: auth.password },
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function clusterInfo(port, auth) {
  const { out } = cli(port, auth, ['cluster', 'info']);
  const field = (name) => new RegExp(`^${name}:(\\S+)`, 'm').exec(out)?.[1];
  return { state: field('cluster_state'), assigned: Number(field('cluster_slots_assigned') ?? 0), out };
}

function startNode(port, auth) {
  const dir = path.join(clusterDir, String(port));
  mkdirSync(dir, { recursive: true });
  // The password reaches redis-server through a config file (mode 0600), not its command line.
  const conf = path.join(dir, 'acl.conf');
  writeFileSync(conf, `user default off\nuser ${auth.user} on >${auth.password} ~* &* +@all\n`, { mode: 0o600 });
  const pid = daemon(
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
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '5000',
      // Test data: no persistence (nodes.conf alone keeps the slot layout across restarts).
      '--appendonly',
      'no',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
    ],
    `redis-cluster-${port}.log`,
  );
  writeFileSync(path.join(dir, 'pid'), String(pid));
}

/**
 * Starts (or reuses) the local three-master cluster and resolves to its REDIS_URL. Nodes already
 * answering with our password are reused as they are; a port held by anything else is an error.
 */
export async function ensureRedisCluster(ports = clusterPorts()) {
  const auth = { user: LOCAL_REDIS_USER, password: localRedisPassword() };
  const url = clusterUrl(ports, auth);
  mkdirSync(clusterDir, { recursive: true });
  const release = await takeLock(path.join(clusterDir, 'lock'), 'starting the local Redis Cluster', 120_000);
  try {
    for (const port of ports) {
      const found = await redisProbe(port, auth);
      if (found === 'authenticated') continue;
      if (found === 'wrong-password' || found === 'open')
        throw new ServiceError(
          `the Redis on port ${port} does not take the password in .local/redis-password; set LOCAL_REDIS_CLUSTER_PORT`,
        );
      if (await portOpen(port))
        throw new ServiceError(`port ${port} is taken by something that is not Redis; set LOCAL_REDIS_CLUSTER_PORT`);
      if (!which('redis-server')) aptInstall('redis-server');
      log(`starting Redis Cluster node on 127.0.0.1:${port}`);
      startNode(port, auth);
    }
    for (const port of ports)
      await waitFor(async () => (await redisProbe(port, auth)) === 'authenticated', `redis cluster node ${port}`);
    if (ports.every((p) => clusterInfo(p, auth).assigned === 0)) {
      log(`creating the cluster over ports ${ports.join(', ')} (three masters, no replicas)`);
      const made = cli(ports[0], auth, [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      if (!made.ok) throw new ServiceError(`redis-cli --cluster create failed:\n${made.out}`);
    }
    // Every node must see all 16384 slots served before a client may rely on it.
    await waitFor(
      async () => ports.every((p) => clusterInfo(p, auth).state === 'ok'),
      'the Redis Cluster (cluster_state:ok on every node)',
    );
    return url;
  } finally {
    release();
  }
}

/** Stops the nodes this script started (pids it recorded); a node started otherwise is left alone. */
export async function stopRedisCluster(ports = clusterPorts()) {
  for (const port of ports) {
    const pidFile = path.join(clusterDir, String(port), 'pid');
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const cmdline = path.join('/proc', String(pid), 'cmdline');
    // A recorded pid that now names another program (the node died, the pid was reused) is not ours.
    if (existsSync(cmdline) && readFileSync(cmdline, 'utf8').includes(`:${port}`)) process.kill(pid, 'SIGTERM');
    await waitFor(async () => !(await portOpen(port)), `redis cluster node ${port} to stop`);
    rmSync(pidFile, { force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    if (process.argv.includes('--stop')) await stopRedisCluster();
    else process.stdout.write(`${await ensureRedisCluster()}\n`);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    log(`error: ${err.message}`);
    process.exit(1);
  }
}
