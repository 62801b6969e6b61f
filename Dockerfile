# syntax=docker/dockerfile:1
# One image for every role (ROLES picks what a container runs): the compiled service (dist/, decision
# 830) on Node.js 24, the current LTS line (decision 831), with production dependencies only.

# deps: production dependencies only. esbuild is one of them (the build below and the browser bundles).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace's manifest, so npm resolves the lockfile's workspace entry (the SDK is not in the image).
COPY packages/client/package.json ./packages/client/
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force

# build: compiles src/ into dist/ and bundles the browser pages (GraphQL explorer, sign-in and approval
# pages, decision 711) into node_modules/.cache, where the service looks for them.
FROM deps AS build
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/services.mjs scripts/node-line.mjs ./scripts/
COPY src ./src
RUN node scripts/build.mjs && node dist/http/reference/graphiql.build.cli.js

# runtime: node, production node_modules (with the bundles), dist/ and proto/; no sources, no tools.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    STORAGE_FS_ROOT=/data/objects
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY proto ./proto
# The filesystem object store's root (STORAGE_FS_ROOT) when no S3 store is configured: mount a volume.
RUN mkdir -p /data/objects && chown -R node:node /data
VOLUME ["/data"]
# The image's `node` user, by number so that a runtime that must prove non-root (Kubernetes'
# runAsNonRoot) can. The application files stay root's: the process cannot change them.
USER 1000:1000
EXPOSE 8080 50051
# /readyz: Redis, MongoDB and the object store answer, and the in-memory contact directory of the node's
# tenants is loaded (decision 1139: about a minute for a 1,000,000-user tenant on the embedded default,
# hence the start period). Nodes without the http role open no HTTP port: their compose or chart entry
# switches this off.
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The flags every product node runs with (scripts/node-flags.mjs, decision 1141).
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
