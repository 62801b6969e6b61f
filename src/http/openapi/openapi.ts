import { z } from 'zod';
import { permissionFor } from '../../auth/permission-table.js';
import { ERROR_CODES } from '../../core/errors.js';
import type { RouteGroup, RouteSpec } from './route-spec.js';
import { contactRoutes } from '../routes/contacts/contacts.router.js';
import { eventRoutes } from '../routes/events/events.router.js';
import { meetingRoutes } from '../routes/meetings/meetings.router.js';
import { notificationRoutes } from '../routes/notification/notification.router.js';
import { peripheralRoutes } from '../routes/peripheral/peripheral.router.js';
import { adminPresenceRoutes } from '../routes/admin/presence.router.js';
import { recordingRoutes } from '../routes/tenant/recording.router.js';

/** Every route group the OpenAPI document describes (the same objects the routers are built from). */
export const DOCUMENTED_GROUPS: readonly RouteGroup[] = [contactRoutes, eventRoutes, meetingRoutes, notificationRoutes, peripheralRoutes, adminPresenceRoutes, recordingRoutes];

type Json = Record<string, unknown>;

function schema(s: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

/** `/get/:eventId` -> `/get/{eventId}` */
export function openApiPath(base: string, path: string): string {
  return `${base}${path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(spec: RouteSpec): Json[] {
  const out: Json[] = [];
  const add = (obj: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!obj || !(obj instanceof z.ZodObject)) return;
    const js = schema(obj, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop, ...(prop.description ? { description: prop.description } : {}) });
    }
  };
  add(spec.params, 'path');
  add(spec.query, 'query');
  return out;
}

function requestBody(spec: RouteSpec): Json | undefined {
  if (spec.multipart) {
    const fields = schema(spec.multipart.fields, 'input') as { properties?: Json };
    const files = Object.fromEntries(spec.multipart.files.map((f) => [f.name, { type: 'string', contentMediaType: 'application/octet-stream', description: f.description }]));
    return { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { ...(fields.properties ?? {}), ...files } } } } };
  }
  if (!spec.body) return undefined;
  return { required: true, content: { 'application/json': { schema: schema(spec.body, 'input') } } };
}

const problemRef = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };

function operation(group: RouteGroup, spec: RouteSpec): Json {
  const requires = permissionFor(spec.operationId);
  const body = requestBody(spec);
  return {
    operationId: spec.operationId,
    tags: [group.tag],
    summary: spec.summary,
    description: [spec.description, `Requires: \`${requires}\` (docs/permissions.md).`].filter(Boolean).join('\n\n'),
    ...(requires === 'public' ? { security: [] } : {}),
    parameters: parameters(spec),
    ...(body ? { requestBody: body } : {}),
    responses: {
      200: { description: 'OK', content: { 'application/json': { schema: schema(spec.response, 'output') } } },
      400: { description: 'Validation failed (errors[].field names the field)', ...problemRef },
      401: { description: 'Not signed in or token invalid', ...problemRef },
      403: { description: 'Permission denied', ...problemRef },
      404: { description: 'Not found (also for ids of other tenants)', ...problemRef },
    },
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

/** The OpenAPI 3.1 document of the directory, scheduling and tenant-administration REST API. */
export function openApiDocument(groups: readonly RouteGroup[] = DOCUMENTED_GROUPS): Json {
  const paths: Record<string, Json> = {};
  for (const g of groups) {
    for (const r of g.routes) {
      const p = openApiPath(g.base, r.path);
      paths[p] = { ...(paths[p] ?? {}), [r.method]: operation(g, r) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Clinical video consultation service: directory, scheduling and tenant administration',
      version: '1',
      description: 'Served on tenant hosts `{tenant}.{BASE_DOMAIN}`. Errors are RFC 9457 problem documents with a stable `code`. GraphQL is at `/graphql` (SDL: docs/api/schema.graphql).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: groups.map((g) => ({ name: g.tag })),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Problem: schema(Problem, 'output') },
    },
  };
}
