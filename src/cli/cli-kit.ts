import { existsSync } from 'node:fs';
import path from 'node:path';
import { AppError, toAppError } from '../kernel/errors.js';
import { ConfigError, type Config } from '../config/config.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { localServicesFile, projectRoot } from '../config/local-services.js';

/** Exit statuses of the command-line tools (sysexits.h): usage, unavailable service, configuration. */
export const EXIT = { ok: 0, failed: 1, usage: 64, unavailable: 69, config: 78 } as const;

export interface CliCommands {
  /** The tool's name as `npm run <tool>` spells it, the prefix of its messages. */
  tool: string;
  usage: string;
  /** Its commands (the first argument); empty for a tool that takes none. */
  commands: readonly string[];
}

/**
 * What every tool does before parsing its own arguments: `--help`, `-h` or `help` prints the usage on
 * stdout and succeeds; no command, or one it does not have, prints what is wrong and the usage on
 * stderr and exits 64. Returns the exit status when the tool should stop here.
 */
export function helpOrRefusal(argv: readonly string[], spec: CliCommands): number | undefined {
  if (argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help') {
    process.stdout.write(`${spec.usage}\n`);
    return EXIT.ok;
  }
  if (!spec.commands.length) return undefined;
  const cmd = argv[0];
  if (!cmd) return usageError(spec, 'a command is required');
  if (!spec.commands.includes(cmd)) return usageError(spec, `unknown command '${cmd}'`);
  return undefined;
}

/** Says what is wrong with the command line, then how it is used; the usage exit status. */
export function usageError(spec: Pick<CliCommands, 'tool' | 'usage'>, problem: string): number {
  process.stderr.write(`${spec.tool}: ${problem}\n${spec.usage}\n`);
  return EXIT.usage;
}

/**
 * The settings a tool that touches the deployment's data may run with: the project's `.env` (variables
 * already in the environment win), then refuses to guess. Without MONGODB_URI (environment or .env),
 * LOCAL_MONGO_PORT, or the local services `npm start` records, the built-in defaults would name
 * whatever database listens on the default port, possibly another deployment's: the tool stops instead.
 */
export function requireSettings(tool: string, env: NodeJS.ProcessEnv = process.env, root = projectRoot): void {
  const dotenv = path.join(root, '.env');
  if (existsSync(dotenv)) process.loadEnvFile(dotenv);
  if (env.MONGODB_URI || env.LOCAL_MONGO_PORT || existsSync(localServicesFile(root))) return;
  throw new ConfigError([
    `[${tool}] no settings: MONGODB_URI and REDIS_URL are not set (environment or ${dotenv}), and no local ` +
      `services are recorded (${localServicesFile(root)}, written by 'npm start'). Start the local services ` +
      `with 'npm start' (or 'npm run services'), or set the deployment's MONGODB_URI and REDIS_URL.`,
  ]);
}

/**
 * An error as a tool prints it: the code, the message with the service's internal field names replaced
 * by the command line's own (`tenantName` -> `NAME`), and each field error on a line of its own under
 * the argument it concerns. Anything not an AppError or ConfigError is an internal failure, rethrown.
 */
export function describeError(tool: string, e: unknown, argumentOf: Readonly<Record<string, string>> = {}): string {
  if (e instanceof ConfigError) return `${e.message}\n`;
  const app = e instanceof AppError ? e : toAppError(e);
  if (app.code === 'internal') throw e;
  const rename = (field: string) => argumentOf[field] ?? argumentOf[field.split('.').pop()!] ?? field;
  let message = app.message;
  for (const field of Object.keys(argumentOf).sort((a, b) => b.length - a.length))
    message = message.replace(
      new RegExp(`(^|[\\s(;])${field.replace(/[.[\]]/g, '\\$&')}:`, 'g'),
      `$1${argumentOf[field]}:`,
    );
  const lines = [`${tool}: error (${app.code}): ${message}`];
  for (const f of app.errors ?? []) if (!message.includes(f.message)) lines.push(`  ${rename(f.field)}: ${f.message}`);
  return `${lines.join('\n')}\n`;
}

/** The services' log lines of a tool, on stderr: stdout carries only the tool's answer. */
export function cliLogger(config: Config): Logger {
  return createLogger({ level: config.log.level, nodeId: config.nodeId, stderr: true });
}
