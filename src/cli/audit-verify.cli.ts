import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { JWK } from 'jose';
import { verifyExport } from '../data/audit-export-verifier.js';
import { helpOrRefusal, usageError } from './cli-kit.js';

const USAGE = `usage: npm run audit-verify -- EXPORT.ndjson --jwks JWKS.json [--jwks OTHER.json ...]
  Verifies an audit export offline (docs/audit.md): the seal signed at export time, every signed
  checkpoint and every entry against the hash its checkpoint signed.
  --jwks: the service's public keys (GET /.well-known/jwks.json), fetched by the auditor the day of the
          export; the seal must be signed by one of them. Exit 0 when everything verifies, 2 when not
          (the report names the first entry that fails).`;

async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, { tool: 'audit-verify', usage: USAGE, commands: [] });
  if (early !== undefined) return early;
  const unknown = argv.find((a) => a.startsWith('-') && a !== '--jwks' && !a.startsWith('--jwks='));
  if (unknown) return usageError({ tool: 'audit-verify', usage: USAGE }, `unknown option '${unknown}'`);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { jwks: { type: 'string', multiple: true } } });
  } catch (e) {
    return usageError({ tool: 'audit-verify', usage: USAGE }, (e as Error).message);
  }
  const [file, ...extra] = parsed.positionals;
  const jwks = parsed.values.jwks ?? [];
  if (!file || extra.length || !jwks.length) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  const trusted = jwks.flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { keys: JWK[] }).keys);
  const report = await verifyExport(createInterface({ input: createReadStream(file) }), trusted);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (!report.ok) process.stderr.write(`not verified: ${report.message}\n`);
  return report.ok ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`fatal: ${(e as Error)?.message ?? e}\n`);
    process.exit(1);
  },
);
