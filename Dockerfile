# oc-host: sign-in host and OrangeCheck attestation verifier.
# Two stages on node:24-slim: build (npm ci, tsc, prune dev dependencies),
# then a runtime image with the compiled service, production dependencies
# and the sign-in pages, running as the unprivileged `node` user.
# docs/operations.md explains the settings; docs/protocol.md §1 lists them all.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lockfile names the consumer package workspace; npm ci needs its manifest.
COPY packages/verify/package.json ./packages/verify/package.json
# Node 24 has SQLite built in (node:sqlite), so the optional native
# better-sqlite3, needed only on Node 20, is left out: nothing compiles.
RUN npm ci --omit=optional --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.page-folders.json ./
COPY src ./src
# The session claims and the revocation feed's entries have one definition,
# in the consumer package; the service imports their types
# (src/identity/session/jwt.ts, src/identity/session/revocations.ts), so the build reads them.
COPY packages/verify/src/claims.ts ./packages/verify/src/claims.ts
COPY packages/verify/src/revocation-feed.ts ./packages/verify/src/revocation-feed.ts
# The page files, for the runtime stage: the shared folder and each
# feature's, in their places under src/ (src/web/pages.ts finds them there).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p page-files/src \
 && cd src && cp -r --parents pages features/*/pages ../page-files/src/

FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Served by the service itself (src/web/pages.ts looks for them here):
# src/pages/ and every src/features/<name>/pages/, and nothing else of src/.
COPY --from=build /app/page-files/src ./src
# The SQLite database (default DATABASE_URL sqlite:./data/oc.sqlite) and the
# development outbox live here; with PostgreSQL it stays empty.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains in-flight requests and exits within 11 s, as PID 1 too
# (docs/operations.md "Stopping"); give `docker stop` 12 s (--stop-timeout 12).
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
