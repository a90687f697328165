# syntax=docker/dockerfile:1
# Build stage: the full install (compiler included) builds dist/; the runtime stage installs only
# the production dependencies and copies the built tree.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN node scripts/ensure-build.mjs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    DATABASE_URL=sqlite:/data/marketplace.sqlite \
    UPLOAD_DIR=/data/uploads
WORKDIR /app
RUN mkdir -p /data && chown node:node /data
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/scripts ./scripts
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
USER node
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/health/').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is process 1, with no shell or npm between: SIGTERM from `docker stop` reaches the server,
# which finishes in-flight requests and exits.
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/main.js"]
CMD ["serve"]
