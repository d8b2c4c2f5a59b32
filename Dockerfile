# syntax=docker/dockerfile:1
# Petstore in a container: `docker build -t petstore .` then
# `docker run -p 8080:8080 -v petstore-data:/data petstore` (SQLite in the volume), or `docker compose up`
# (PostgreSQL, Redis, two instances behind a load balancer: compose.yaml). Node 24, the current LTS line,
# held at 24.18: from 24.19 on, Node aborts when it frees a better-sqlite3 12 statement outside JavaScript (at
# exit, or in an idle garbage collection; nodejs/node#65446). better-sqlite3 13 avoids it but needs Node 22+,
# and this service still supports Node 20. `--build-arg NODE_IMAGE=node:22-slim` (or 26) works as well.
ARG NODE_IMAGE=node:24.18-slim

# Build: compiles better-sqlite3 (toolchain here only) and the TypeScript, then drops the dev dependencies.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
# No scripts yet: `prepare` builds from sources that are not copied until the next layer.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY client/ client/
COPY src/ src/
COPY bin/ bin/
# The partner dashboard: bundled by npm run build into dist/public/dashboard (served from there); the CLI's
# commands into dist/cli/bundle.js.
COPY dashboard/ dashboard/
COPY scripts/build-dashboard.ts scripts/build-cli.ts scripts/
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: no toolchain, no sources, not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=sqlite:/data/petstore.sqlite
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
COPY --from=build /app/bin/ bin/
COPY --from=build /app/client/package.json client/
COPY --from=build /app/client/dist/ client/dist/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# The image has no curl: node's fetch asks /healthz on PORT (the process is up; /readyz is for the balancer).
# HOST must then include the loopback interface (0.0.0.0, the default here, does).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, so `docker stop` drains (PETSTORE_DRAIN_SECONDS).
CMD ["node", "--max-semi-space-size=4", "dist/main.js"]
