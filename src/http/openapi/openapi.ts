import { z } from 'zod';
import type { Requirement } from '../../kernel/requirement.js';
import { ERROR_CODES } from '../../kernel/errors.js';
import { ALL_GROUPS } from '../routes/groups.js';
import { isProbe, type RouteGroup, type RouteSpec } from '../routes/route-spec.js';
import { problemCodes, problemExamples, ProblemResponses } from './responses.js';

/** Every route group the OpenAPI document describes: the same declarations the routers are built from. */
export const DOCUMENTED_GROUPS: readonly RouteGroup[] = ALL_GROUPS;

type Json = Record<string, unknown>;

/** Text the service accepts: no C0 control characters but tab, line feed and carriage return, no DEL (src/kernel/text-input.ts). */
export const NO_CONTROL_CHARS = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';

/** Adds the control-character rule to every free-text string of an input schema (patterned ones already exclude them). */
function plainText(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(plainText);
  if (!node || typeof node !== 'object') return;
  const n = node as Json;
  const isString = n.type === 'string' || (Array.isArray(n.type) && n.type.includes('string'));
  if (isString && n.pattern === undefined && n.enum === undefined && n.const === undefined && n.format === undefined)
    n.pattern = NO_CONTROL_CHARS;
  // Where zod gives its own pattern for a format (email), the pattern is the rule it applies.
  if (isString && n.format !== undefined && n.pattern !== undefined) delete n.format;
  Object.values(n).forEach(plainText);
}

function schema(s: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  if (io === 'input') plainText(out);
  return out;
}

/** `/get/:eventId` -> `/get/{eventId}`; a wildcard `*path` -> `{path}` (its value may contain `/`). */
export function openApiPath(base: string, path: string): string {
  return `${base}${path}`.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

/** What an operation requires, as its route declares it (the probes: `public`). */
export function requirementOf(spec: RouteSpec): Requirement {
  return spec.requires;
}

const WILDCARD = {
  type: 'string',
  minLength: 1,
  pattern: NO_CONTROL_CHARS,
  description: 'One or more path segments separated by `/`',
};

function parameters(spec: RouteSpec): Json[] {
  const out: Json[] = [];
  const wildcards = new Set([...spec.path.matchAll(/\*([A-Za-z0-9_]+)/g)].map((m) => m[1]));
  const add = (obj: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!obj || !(obj instanceof z.ZodObject)) return;
    const js = schema(obj, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, raw] of Object.entries(js.properties ?? {})) {
      const prop = where === 'path' && wildcards.has(name) ? WILDCARD : raw;
      out.push({
        name,
        in: where,
        required: where === 'path' || (js.required ?? []).includes(name),
        schema: prop,
        ...(prop.description ? { description: prop.description } : {}),
      });
    }
  };
  add(spec.params, 'path');
  add(spec.query, 'query');
  if (spec.binary) {
    out.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description: 'An ETag of the file: 304 when it still matches',
    });
    if (spec.binary.ranged) {
      out.push({
        name: 'Range',
        in: 'header',
        required: false,
        schema: { type: 'string', pattern: '^bytes=' },
        description: 'One byte range, e.g. `bytes=0-1023` (206); several ranges are answered whole',
      });
      out.push({
        name: 'If-Range',
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: 'Serve the range only while the ETag still matches',
      });
    }
  }
  return out;
}

function requestBody(spec: RouteSpec): Json | undefined {
  const example = spec.example?.request === undefined ? {} : { example: spec.example.request };
  if (spec.multipart) {
    const fields = schema(spec.multipart.fields, 'input') as { properties?: Json; required?: string[] };
    const files = Object.fromEntries(
      spec.multipart.files.map((f) => [
        f.name,
        { type: 'string', contentMediaType: 'application/octet-stream', description: f.description },
      ]),
    );
    const required = [...(fields.required ?? []), ...spec.multipart.files.filter((f) => f.required).map((f) => f.name)];
    const description = spec.multipart.streaming
      ? 'Streamed: the file part is checked and stored while it arrives.'
      : undefined;
    return {
      required: true,
      ...(description ? { description } : {}),
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: { ...(fields.properties ?? {}), ...files },
            ...(required.length ? { required } : {}),
          },
        },
      },
    };
  }
  if (!spec.body) return undefined;
  const type = spec.form ? 'application/x-www-form-urlencoded' : 'application/json';
  const optional = spec.body.safeParse(undefined).success;
  return { required: !optional, content: { [type]: { schema: schema(spec.body, 'input'), ...example } } };
}

const binaryHeaders = (ranged: boolean): Json => ({
  ETag: { description: 'Strong entity tag of the file', schema: { type: 'string' } },
  'Content-Disposition': {
    description: 'inline or attachment, with the file name (RFC 6266)',
    schema: { type: 'string' },
  },
  ...(ranged ? { 'Accept-Ranges': { description: 'bytes', schema: { type: 'string' } } } : {}),
});

function successResponses(spec: RouteSpec): Record<string, Json> {
  const status = String(spec.status ?? 200);
  const headers = spec.headers ? { headers: spec.headers } : {};
  const out: Record<string, Json> = {};
  if (spec.binary) {
    const body = { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } };
    out[status] = { description: spec.binary.description, headers: binaryHeaders(spec.binary.ranged), content: body };
    if (spec.binary.ranged)
      out['206'] = {
        description: 'The requested byte range',
        headers: {
          ...binaryHeaders(true),
          'Content-Range': { description: 'bytes start-end/size', schema: { type: 'string' } },
        },
        content: body,
      };
    out['304'] = {
      description: 'Not modified (If-None-Match matched the ETag)',
      headers: { ETag: { description: 'Entity tag', schema: { type: 'string' } } },
    };
  } else if (spec.empty || !spec.response) {
    out[status] = { description: 'Done (empty body)', ...headers };
  } else {
    const example = spec.example?.response === undefined ? {} : { example: spec.example.response };
    out[status] = {
      description: status === '201' ? 'Created' : status === '202' ? 'Accepted' : 'OK',
      ...headers,
      content: { 'application/json': { schema: schema(spec.response, 'output'), ...example } },
    };
  }
  if (spec.links) out[status] = { ...out[status], links: spec.links };
  for (const [s, extra] of Object.entries(spec.alsoAnswers ?? {})) {
    if (!extra) continue;
    out[s] = {
      description: extra.description,
      ...(extra.headers ? { headers: extra.headers } : {}),
      ...(extra.schema ? { content: { 'application/json': { schema: schema(extra.schema, 'output') } } } : {}),
    };
  }
  return out;
}

const BEARER = [{ internalToken: [] }, { identityProviderToken: [] }];

function operation(group: RouteGroup, spec: RouteSpec, problems: ProblemResponses): Json {
  const requires = requirementOf(spec);
  const body = requestBody(spec);
  const note = isProbe(spec.operationId)
    ? 'Probe: any host, no token, not rate limited.'
    : `Requires: \`${requires}\` (docs/permissions.md).${spec.note ? ` ${spec.note}.` : ''}`;
  return {
    operationId: spec.operationId,
    tags: [group.tag],
    summary: spec.summary,
    description: [
      spec.description,
      note,
      spec.rateLimit
        ? 'Has its own rate limit besides the per-address one (429 `rate_limited`, Retry-After).'
        : undefined,
    ]
      .filter(Boolean)
      .join('\n\n'),
    security: requires === 'public' ? [] : BEARER,
    parameters: parameters(spec),
    ...(body ? { requestBody: body } : {}),
    responses: { ...successResponses(spec), ...problems.forCodes(problemCodes(spec, requires)) },
  };
}

const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.enum(Object.keys(ERROR_CODES) as [string, ...string[]]),
  correlationId: z.string().optional(),
  instance: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

const DESCRIPTION = `Served on tenant hosts \`{tenant}.{BASE_DOMAIN}\`: the host names the tenant. Errors are RFC 9457 problem documents (\`application/problem+json\`) with a stable \`code\` from one closed catalogue (the \`Problem\` schema lists it); each operation lists the codes it can answer with under each status. Any request carrying a body can also be refused with 413 \`payload_too_large\` or 415 \`unsupported_media_type\` by the body parsers, and every request counts against the per-address rate limit (429 \`rate_limited\`).

Sign in with POST /api/account/login (or the identity provider's authorization code flow) and send the access token as \`Authorization: Bearer\`. GraphQL is at \`/graphql\` (SDL: docs/api/schema.graphql); the realtime hub is at \`/hubs/mobile\` (docs/hub.md).`;

/** The OpenAPI 3.1 document of every REST operation (built from the same declarations as the routers). */
export function openApiDocument(groups: readonly RouteGroup[] = DOCUMENTED_GROUPS): Json {
  const paths: Record<string, Json> = {};
  const problems = new ProblemResponses();
  for (const g of groups) {
    for (const r of g.routes) {
      const p = openApiPath(g.base, r.path);
      paths[p] = { ...(paths[p] ?? {}), [r.method]: operation(g, r, problems) };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Clinical video consultation service: REST API', version: '1', description: DESCRIPTION },
    servers: [
      { url: '/', description: 'The tenant host serving this document' },
      {
        url: '{scheme}://{tenant}.{baseDomain}',
        description: 'A tenant host',
        variables: {
          scheme: { default: 'https', enum: ['https', 'http'] },
          tenant: { default: 'demo', description: 'The tenant (realm) name' },
          baseDomain: {
            default: 'localhost:8080',
            description: 'BASE_DOMAIN of the deployment (with the port, if any)',
          },
        },
      },
    ],
    security: BEARER,
    tags: [
      ...new Map(
        groups.map((g) => [g.tag, { name: g.tag, ...(g.description ? { description: g.description } : {}) }]),
      ).values(),
    ],
    paths,
    components: {
      securitySchemes: {
        internalToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Internal access token issued by this service (POST /api/account/login, /refresh, /offlineLogin, /impersonate); carries the permissions. Public keys: /.well-known/jwks.json.',
        },
        identityProviderToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "Access token issued by the tenant's realm of the identity provider (authorization code flow with PKCE); permissions come from the user's role.",
        },
      },
      schemas: { Problem: schema(Problem, 'output') },
      responses: problems.components(),
      examples: problemExamples(),
    },
  };
}
