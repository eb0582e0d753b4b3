# logplane: every component (`up`, `apiserver`, `controllers`, `agent`) and the CLI, run
# from the TypeScript sources through tsx (no build step). Pods of the process runtime run
# inside the agent's container, as processes of the built-in images.

# The dashboard (/ui/) is browser code built with Vite, a dev dependency: built in a stage of
# its own, so the image keeps production dependencies only and still serves it.
FROM node:20-slim AS dashboard
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY dashboard ./dashboard
RUN node dashboard/build.mjs

FROM node:20-slim
WORKDIR /opt/logplane
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
COPY --from=dashboard /build/dashboard/dist ./dashboard/dist

ENTRYPOINT ["node", "bin/logplane.mjs"]
CMD ["--help"]
