# The watchdog daemon as a container image (issue 16). Build from the repository root:
#   docker build -t game-server-watchdog .
# or, with no container engine and no registry to pull node:20-bookworm-slim from, with buildah
# (deploy/image.sh, `npm run image`: it makes a base image from the machine's node first):
#   deploy/image.sh --tag localhost/game-server-watchdog:latest
# Run it with the configuration folder mounted at /config (appsettings.yml, and appsettings.<env>.yml /
# appsettings.Secret.yml beside it) and a writable volume at /data (instance folders, logs, data.db):
#   docker run -v ./config:/config:ro -v watchdog-data:/data -p 5000:5000 \
#     -e Servers__Instances__main__ApiToken=... game-server-watchdog
# docs/production.md ("The container image") explains each choice. test/image/image.e2e.ts builds this file
# that way and runs the image; test/dist/image.test.ts runs its final ENTRYPOINT + CMD with its ENV and WORKDIR
# as a plain process, so keep those in the plain forms it parses.

ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Compile: the full dependency tree (TypeScript included) and the sources, to dist/.
FROM ${NODE_IMAGE} AS build
# Set only where the registry is reached through a TLS-intercepting proxy (deploy/image.sh passes the host's
# setting): npm then trusts that proxy's CA, in this stage only. A build argument is not kept in the image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.build-types.json ./
COPY deploy/build.mjs deploy/build.mjs
COPY src src
COPY machines machines
RUN npm run build

# 2. Production dependencies only: no TypeScript, no tsx, no test or bench tools.
FROM ${NODE_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional too: valibot names typescript as an optional peer, which npm then keeps under --omit=dev alone
# (with its native compiler binary). No production dependency has another optional one.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --ignore-scripts

# 3. The image: node, the production dependencies, the compiled JavaScript and bin/ (which runs dist/ because
# there is no src/ here). Nothing else from the build stage.
FROM ${NODE_IMAGE}
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json ./
COPY bin bin
# /config is mounted (read-only is fine); /data must be writable by the unprivileged user that runs the daemon.
RUN mkdir -p /config /data && chown node:node /data
USER node
ENV NODE_ENV=production
# Every interface inside the container, as Kestrel spells it; override it like any .NET-style setting
# (Servers__Instances__<key>__ApiToken, …), which take precedence over the mounted files.
ENV ASPNETCORE_URLS=http://*:5000
WORKDIR /data
VOLUME ["/data"]
EXPOSE 5000
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 CMD ["node", "/app/bin/healthcheck.mjs"]
# node is PID 1: the daemon handles SIGTERM itself (every server shut down gracefully, then exit 0), and it
# reaps its own children, the game servers. Run with `docker run --init` if servers leave orphans of their own.
ENTRYPOINT ["node", "/app/bin/watchdog"]
CMD ["start", "--config", "/config/appsettings.yml", "--log-format", "json"]
