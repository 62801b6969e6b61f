# One image for every role (ROLES picks what a container runs). TypeScript runs through tsx, the
# same loader `npm start` uses, so the image has no separate build step.
FROM node:20-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
# The workspace's manifest, so npm resolves the lockfile's workspace entry (the SDK is not in the image).
COPY packages/client/package.json ./packages/client/
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY proto ./proto
COPY src ./src
# The GraphQL explorer's browser bundle (esbuild over the installed packages, decision 711).
RUN node --import tsx src/http/reference/graphiql.build.cli.ts

USER node
EXPOSE 8080 50051
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "src/main.ts"]
