# logplane: every component (`up`, `apiserver`, `controllers`, `agent`) and the CLI, run
# from the TypeScript sources through tsx (no build step). Pods of the process runtime run
# inside the agent's container, as processes of the built-in images.
FROM node:20-slim

WORKDIR /opt/logplane
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .

ENTRYPOINT ["node", "bin/logplane.mjs"]
CMD ["--help"]
