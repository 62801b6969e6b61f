import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { JWK } from 'jose';
import { verifyExport } from '../data/audit-export-verifier.js';
import { helpOrRefusal, usageError } from './cli-kit.js';

const USAGE = `usage: npm run audit-verify -- EXPORT.ndjson [--jwks JWKS.json]
  Verifies an audit export offline (docs/audit.md): the hash chain and every signed checkpoint.
  --jwks: the service's public keys (GET /.well-known/jwks.json, kept by the auditor); checkpoints
          signed by any other key then fail. Exit 0 when everything verifies, 2 when not.`;

async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, { tool: 'audit-verify', usage: USAGE, commands: [] });
  if (early !== undefined) return early;
  const unknown = argv.find((a) => a.startsWith('-') && a !== '--jwks');
  if (unknown) return usageError({ tool: 'audit-verify', usage: USAGE }, `unknown option '${unknown}'`);
  const file = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--jwks');
  const jwksAt = argv.indexOf('--jwks');
  if (!file || (jwksAt >= 0 && !argv[jwksAt + 1])) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  const trusted =
    jwksAt >= 0 ? (JSON.parse(readFileSync(argv[jwksAt + 1]!, 'utf8')) as { keys: JWK[] }).keys : undefined;
  const report = await verifyExport(createInterface({ input: createReadStream(file) }), trusted);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.ok ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`fatal: ${(e as Error)?.message ?? e}\n`);
    process.exit(1);
  },
);
