import type { Express } from 'express';

export interface ServedRoute {
  method: string;
  /** Full Express path, e.g. `/api/events/get/:eventId`. */
  path: string;
}

interface LayerLike {
  route?: { path: string; methods: Record<string, boolean>; stack: { name: string }[] };
  handle?: { stack?: LayerLike[] };
  rawPath?: string | string[];
}

/**
 * Every route of a built Express app, found by walking its router stack: route layers give their
 * path and methods, mounted routers are walked with their mount path as prefix.
 */
export function servedRoutes(app: Express): ServedRoute[] {
  const out: ServedRoute[] = [];
  const walk = (stack: LayerLike[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all') out.push({ method, path: `${prefix}${layer.route.path}` });
        // The 405 answer a declared path gets for other methods (route-spec.ts) is part of that declaration.
        if (layer.route.methods._all && !layer.route.stack.every((l) => l.name === 'methodNotAllowed'))
          out.push({ method: 'all', path: `${prefix}${layer.route.path}` });
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: LayerLike[] } }).router.stack, '');
  return out;
}
