import { Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import type { Services } from '../../composition.js';
import type { OperationId } from '../../auth/permission-table.js';
import type { Principal } from '../../auth/principal.js';
import { guard, principalOf } from '../middleware/auth.js';
import { requireTenant } from '../middleware/tenant.js';
import { parse } from '../validate.js';

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface HandlerInput<P extends AnyObject | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  p: Principal;
  params: P extends AnyObject ? z.infer<P> : Record<string, never>;
  query: Q extends z.ZodType ? z.infer<Q> : Record<string, never>;
  body: B extends z.ZodType ? z.infer<B> : undefined;
  req: Request;
  res: Response;
}

/**
 * One REST operation: its permission-table id, path, zod schemas in and out, and the handler. The
 * router and the OpenAPI document are both built from these, so they cannot drift apart.
 */
export interface RouteSpec<P extends AnyObject | undefined = AnyObject | undefined, Q extends z.ZodType | undefined = z.ZodType | undefined, B extends z.ZodType | undefined = z.ZodType | undefined> {
  operationId: OperationId;
  method: 'get' | 'post';
  /** Express path relative to the group base, e.g. `/get/:eventId`. */
  path: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** multipart/form-data body: the text fields' schema and the file part names (documented, parsed by the handler). */
  multipart?: { fields: AnyObject; files: { name: string; description: string }[] };
  response: z.ZodType;
  handle(services: Services, input: HandlerInput<P, Q, B>): Promise<unknown>;
}

export interface RouteGroup {
  base: string;
  tag: string;
  routes: RouteSpec[];
}

/** Keeps each spec's generic types while collecting them in one array. */
export function op<P extends AnyObject | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** Builds the Express router of a group: tenant host -> guard -> validate -> one service call -> JSON. */
export function routerFor(group: RouteGroup, services: Services): Router {
  const r = Router();
  for (const spec of group.routes) {
    r[spec.method](spec.path, requireTenant, guard(spec.operationId), async (req, res) => {
      const input = {
        p: principalOf(req),
        params: spec.params ? parse(spec.params, req.params, 'params') : {},
        query: spec.query ? parse(spec.query, req.query, 'query') : {},
        body: spec.body ? parse(spec.body, req.body) : undefined,
        req,
        res,
      };
      const out = await spec.handle(services, input as HandlerInput<AnyObject, z.ZodType, z.ZodType>);
      if (!res.headersSent) res.json(out);
    });
  }
  return r;
}
