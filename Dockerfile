# syntax=docker/dockerfile:1
# Build with dev dependencies, run with production dependencies only.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source (no prebuilt binary for every platform).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# npm workspaces: the install needs every workspace's manifest (the client, MCP and CLI packages
# are not built into the image; the service depends on the contract only).
COPY package.json package-lock.json ./
COPY clients/ts/package.json ./clients/ts/
COPY mcp/package.json ./mcp/
COPY cli/package.json ./cli/
COPY generated/package.json ./generated/
COPY tls/package.json ./tls/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.console.json ./
COPY proto ./proto
# The contract (@taskplans/contract): generated code, its codec, the descriptor sets; and
# @taskplans/tls, the certificate reloading the service shares with the MCP server.
COPY generated ./generated
COPY tls ./tls
COPY src ./src
# The plan console: its page (src/console/page) bundled by esbuild into dist/console by `npm run build`.
COPY scripts/build-console.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
# tini is PID 1 so SIGTERM reaches Node (graceful drain) and zombies are reaped.
RUN apt-get update && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    PLAN_GRPC_ADDRESS=0.0.0.0:50051 \
    PLAN_METRICS_ADDRESS=0.0.0.0:9464 \
    PLAN_HTTP_ADDRESS=0.0.0.0:8080
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The contract workspace, which node_modules/@taskplans/contract links to: its manifest and build,
# and the descriptor sets server reflection serves.
COPY --from=build /app/generated/package.json ./generated/package.json
COPY --from=build /app/generated/dist ./generated/dist
COPY --from=build /app/generated/descriptors ./generated/descriptors
# @taskplans/tls, which node_modules/@taskplans/tls links to: its manifest and build.
COPY --from=build /app/tls/package.json ./tls/package.json
COPY --from=build /app/tls/dist ./tls/dist
# The only writable path besides /tmp: the embedded database (mount a volume, or use MySQL).
RUN mkdir -p /app/var && chown 10001:10001 /app/var
USER 10001:10001
EXPOSE 50051 9464 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/bin/main.js"]
