import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';

/** The project root (two levels above this file: src/config/, or dist/config/ in the compiled build). */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const root = projectRoot;

/** Where `npm start` records the local services it started (their URLs, with credentials). */
export function localServicesFile(root = projectRoot): string {
  return path.join(root, '.local', 'services.json');
}

interface LocalServices {
  mongoUri?: string;
  redisUrl?: string;
}

function portOf(url: string): string | undefined {
  const m = /^[a-z+]+:\/\/(?:[^@/]*@)?[^:/,]+:(\d+)/.exec(url);
  return m?.[1];
}

/**
 * The settings a command-line tool runs with: the same as `npm start` gives the service. An explicit
 * MONGODB_URI / REDIS_URL wins; otherwise the local servers `npm start` started (.local/services.json,
 * which carries their credentials) when they listen on LOCAL_MONGO_PORT / LOCAL_REDIS_PORT (or those are
 * unset); otherwise the local port named by LOCAL_MONGO_PORT / LOCAL_REDIS_PORT; otherwise the defaults.
 * Callers load .env first, like `npm start` (variables already in the environment win).
 */
export function cliEnvironment(env: NodeJS.ProcessEnv = process.env, projectRoot = root): NodeJS.ProcessEnv {
  const out = { ...env };
  const servicesFile = localServicesFile(projectRoot);
  const local: LocalServices = existsSync(servicesFile)
    ? (JSON.parse(readFileSync(servicesFile, 'utf8')) as LocalServices)
    : {};
  const pick = (
    explicit: string | undefined,
    recorded: string | undefined,
    port: string | undefined,
    scheme: string,
  ) => {
    if (explicit) return explicit;
    if (recorded && (!port || portOf(recorded) === port)) return recorded;
    if (port) return `${scheme}://127.0.0.1:${port}${scheme === 'mongodb' ? '/' : ''}`;
    return undefined;
  };
  const mongo = pick(env.MONGODB_URI, local.mongoUri, env.LOCAL_MONGO_PORT, 'mongodb');
  const redis = pick(env.REDIS_URL, local.redisUrl, env.LOCAL_REDIS_PORT, 'redis');
  if (mongo) out.MONGODB_URI = mongo;
  if (redis) out.REDIS_URL = redis;
  return out;
}

/** A URL with its password replaced, for printing. */
export function redact(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}

/** The line a tool prints before it writes anything: which database and Redis it is about to use. */
export function targetLine(tool: string, config: Config): string {
  return `[${tool}] MongoDB ${redact(config.mongo.uri)} (catalog ${config.mongo.catalogDb}), Redis ${redact(config.redis.url)} (prefix ${config.redis.prefix || '-'})\n`;
}
