import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../../src/kernel/errors.js';
import { OPERATIONS, type OperationId } from '../../../src/operations/operation-table.js';
import type { Requirement } from '../../../src/kernel/requirement.js';
import type { HttpResult } from '../../support/http.js';

/** SOAK=1 (npm run test:soak) multiplies every run count. */
export const SOAK = process.env.SOAK === '1';
export const runs = (n: number): number => (SOAK ? n * 10 : n);

/**
 * Inputs per REST endpoint, GraphQL operation and hub method in `npm test` (ten times more under SOAK=1),
 * sent in concurrent batches of FUZZ_BATCH: one fast-check run is one batch.
 */
export const FUZZ_PER_TARGET = runs(100);
export const FUZZ_BATCH = 10;
/** `arb` drawn FUZZ_BATCH times per run: FUZZ_PER_TARGET inputs in all. */
export function batches<T>(arb: fc.Arbitrary<T>): [fc.Arbitrary<T[]>, number] {
  return [fc.array(arb, { minLength: FUZZ_BATCH, maxLength: FUZZ_BATCH }), Math.ceil(FUZZ_PER_TARGET / FUZZ_BATCH)];
}

/** The first difference between two reads of stored state, or undefined when equal. */
export function stateDiff(before: Record<string, unknown>, after: Record<string, unknown>): string | undefined {
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [x, y] = [JSON.stringify(before[k]), JSON.stringify(after[k])];
    if (x !== y) return `${k} changed: ${x?.slice(0, 300)} -> ${y?.slice(0, 300)}`;
  }
  return undefined;
}

/** FUZZ_SEED=N replays a run: fast-check prints the seed and the shrunk input of a failing property. */
const FUZZ_SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

/**
 * Sends `numRuns` inputs drawn from `arb` through `check`, which answers the breach it saw (or
 * undefined); a breach fails the property, which fast-check shrinks and reports with its seed.
 */
export async function fuzz<T>(
  arb: fc.Arbitrary<T>,
  numRuns: number,
  check: (input: T) => Promise<string | undefined>,
): Promise<void> {
  let first: string | undefined;
  const property = fc.asyncProperty(arb, async (input) => {
    const problem = await check(input);
    first ??= problem;
    return problem === undefined;
  });
  // Shrinking re-runs the property (state read-backs included): bounded so a breach reports in time.
  await fc
    .assert(property, {
      numRuns,
      interruptAfterTimeLimit: SOAK ? 600_000 : 60_000,
      markInterruptAsFailure: true,
      ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }),
    })
    .catch((e: Error) => {
      throw new Error(`${first ?? 'interrupted'}\n${e.message}`);
    });
}

/** FUZZ_ONLY=id[,id] runs only those targets (with FUZZ_SEED, to replay one failure quickly). */
export const FUZZ_ONLY = process.env.FUZZ_ONLY?.split(',');
export const selected = (id: string): boolean => !FUZZ_ONLY || FUZZ_ONLY.includes(id);

/**
 * Env for nodes under fuzzing: the per-IP and per-socket limits are raised so the inputs reach
 * validation and the services instead of stopping at the rate limiter (the brute-force tests keep them).
 */
export const FUZZ_ENV: Record<string, string> = {
  RATE_LIMIT_PER_IP: '10000000',
  RATE_LIMIT_SIGNIN_PER_IP: '10000000',
  RATE_LIMIT_SIGNIN_PER_ACCOUNT: '10000000',
  HUB_RATE_LIMIT_BURST: '10000000',
  HUB_RATE_LIMIT_PER_SECOND: '10000000',
  // The isolation seed subscribes a loopback endpoint (http://127.0.0.1:9): the operator settings allow
  // it; fuzzed nodes run no workers, so nothing is ever sent to it.
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
};

export interface RestOp {
  id: OperationId;
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** Path template as the table names it (`{name}` and `{*rest}` parameters). */
  template: string;
  params: string[];
  requires: Requirement;
  /** JSON-schema property names of the request body, when the OpenAPI document describes one. */
  bodyKeys: string[];
}

type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }
    >
  >;
};
const openapi = JSON.parse(readFileSync(new URL('../../../docs/api/openapi.json', import.meta.url), 'utf8')) as OpenApi;

/** Every REST endpoint of the permission table (new rows are fuzzed without touching the tests). */
export function restOperations(): RestOp[] {
  return (Object.keys(OPERATIONS) as OperationId[])
    .filter((id) => OPERATIONS[id].transport === 'rest')
    .map((id) => {
      const [verb, template] = OPERATIONS[id].name.split(' ') as [string, string];
      const method = verb.toLowerCase() as RestOp['method'];
      const doc =
        openapi.paths[template]?.[method]?.requestBody?.content?.['application/json']?.schema?.properties ?? {};
      const params = [...template.matchAll(/\{(\*?\w+)\}/g)].map((m) => m[1]!);
      return { id, method, template, params, requires: OPERATIONS[id].requires, bodyKeys: Object.keys(doc) };
    });
}

export function opsOf(transport: 'graphql' | 'hub'): { id: OperationId; name: string; requires: Requirement }[] {
  return (Object.keys(OPERATIONS) as OperationId[])
    .filter((id) => OPERATIONS[id].transport === transport)
    .map((id) => ({ id, name: OPERATIONS[id].name, requires: OPERATIONS[id].requires }));
}

/** Fills a path template; values are percent-encoded unless `raw` (traversal probes send them as written). */
export function fillPath(template: string, values: Record<string, string>, raw = false): string {
  return template.replace(/\{(\*?\w+)\}/g, (_, k: string) => {
    const v = values[k] ?? 'x';
    return raw ? v : encodeBytes(v);
  });
}

/** Percent-encodes the UTF-8 bytes of any string, lone surrogates included (encodeURIComponent throws on those). */
function encodeBytes(v: string): string {
  return [...Buffer.from(v, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** Strings that have broken parsers, ORMs and path handling before. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  '{"$gt":""}',
  '$where',
  '$ne',
  'a.b',
  '..',
  '../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f',
  '%252e%252e%252f',
  '..\\..\\windows\\win.ini',
  '\u0000',
  '\ud800',
  '\u202e',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '0123456789abcdef01234567',
  'ffffffffffffffffffffffff',
  '000000000000000000000000',
  '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d',
  'x'.repeat(5000),
  '🙂'.repeat(300),
];

export const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const boundaryNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 2 ** 31, -(2 ** 31), 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 0.5, 1e-320),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Wrongly typed, boundary and operator-injection values for any JSON field. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    boundaryNumber,
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(
      { $gt: '' },
      { $ne: null },
      { $where: 'sleep(1000)' },
      { __proto__: { admin: true } },
      { constructor: { prototype: { x: 1 } } },
    ),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A JSON body: the documented keys (when known) plus stray ones, each with a hostile value. */
export function nastyBody(keys: string[]): fc.Arbitrary<unknown> {
  const shaped = keys.length
    ? fc
        .record(Object.fromEntries(keys.map((k) => [k, nastyValue])), { requiredKeys: [] })
        .chain((o) => fc.dictionary(nastyString, nastyValue, { maxKeys: 2 }).map((extra) => ({ ...extra, ...o })))
    : fc.dictionary(nastyString, nastyValue, { maxKeys: 5 });
  return fc.oneof({ weight: 4, arbitrary: shaped }, { weight: 1, arbitrary: nastyValue });
}

/** Raw bodies that are not JSON at all, or JSON that is too deep or too big. */
export const RAW_BODIES: { name: string; body: string; type: string }[] = [
  { name: 'truncated JSON', body: '{"name": "a', type: 'application/json' },
  { name: 'not JSON', body: 'hello', type: 'application/json' },
  { name: 'deeply nested', body: '['.repeat(5000) + ']'.repeat(5000), type: 'application/json' },
  { name: 'huge JSON', body: JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }), type: 'application/json' },
  { name: 'form encoded', body: 'name=a&name=b&__proto__[x]=1', type: 'application/x-www-form-urlencoded' },
  {
    name: 'xml',
    body: '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
    type: 'application/xml',
  },
  { name: 'wrong charset', body: '{"a":"\u00ff"}', type: 'application/json; charset=utf-7' },
];

const CODES = new Set(Object.keys(ERROR_CODES));

/**
 * What every answer to hostile input must look like: below 500, and a failure is a problem document
 * whose `code` is one of the registered error codes. Returns a description of the breach, or undefined.
 */
export function breach(r: HttpResult): string | undefined {
  if (r.status >= 500) return `status ${r.status}: ${r.text.slice(0, 300)}`;
  if (r.status < 400 || (r.status === 404 && r.text === '')) return undefined;
  const type = String(r.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json'))
    return `status ${r.status} without problem+json (${type}): ${r.text.slice(0, 200)}`;
  if (!CODES.has(r.body?.code)) return `status ${r.status} with unregistered code ${String(r.body?.code)}`;
  return undefined;
}

/** GraphQL: an answer without a 5xx whose every error carries a registered `extensions.code`. */
export function graphqlBreach(r: HttpResult): string | undefined {
  if (r.status >= 500) return `status ${r.status}: ${r.text.slice(0, 300)}`;
  if (r.status >= 400 && !r.body?.errors && !r.body?.code)
    return `status ${r.status} without a coded body: ${r.text.slice(0, 200)}`;
  if (r.body?.code && !CODES.has(r.body.code)) return `problem with unregistered code ${r.body.code}`;
  for (const e of r.body?.errors ?? []) {
    if (!CODES.has(e?.extensions?.code)) return `error without a registered code: ${JSON.stringify(e).slice(0, 300)}`;
    if (e.extensions.code === 'internal') return `internal error: ${e.message}`;
  }
  return undefined;
}

/** Counts inputs per operation so the docs can quote the figures of the latest run. */
export class Tally {
  readonly perOp = new Map<string, number>();
  readonly breaches: string[] = [];
  add(op: string, problem?: string): void {
    this.perOp.set(op, (this.perOp.get(op) ?? 0) + 1);
    if (problem) this.breaches.push(`${op}: ${problem}`);
  }
  get total(): number {
    return [...this.perOp.values()].reduce((a, b) => a + b, 0);
  }
}
