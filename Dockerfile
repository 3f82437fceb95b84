# Quarry's image: `quarry serve` by default; the same image runs `quarry worker` and every command.
# Build: docker build -t quarry . — or `docker compose up` with compose.yaml (docs/OPERATIONS.md).

FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles when no prebuilt binary fits.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY . .
# npm ci builds dist/ and web/dist (the prepare script); the runtime keeps production packages only.
RUN npm ci --no-audit --no-fund \
  && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    QUARRY_HOME=/data \
    QUARRY_LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7777
# Process up; /readyz (store, migrations, runner) is what a load balancer should route on.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:7777/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/quarry"]
CMD ["serve", "--host", "0.0.0.0", "--port", "7777"]
