# fairdeal table node.
#
#   docker build -t fairdeal .
#   docker volume create fairdeal-data
#   docker run --rm -v fairdeal-data:/data fairdeal init --data /data \
#     --listen /ip4/0.0.0.0/tcp/7400 --listen /ip4/0.0.0.0/tcp/7401/ws
#   docker run --rm -i -v fairdeal-data:/data --entrypoint sh fairdeal -c 'cat > /data/node.json' < node.json
#   (node.json: "data": ".", "listen" on 0.0.0.0; see README.md, "Running in Docker")
#   docker run -d --name fairdeal -v fairdeal-data:/data -p 7400:7400 -p 7401:7401 fairdeal
#   docker exec fairdeal fairdeal hand deal --data /data
#   A relay for a dealer nobody can dial:
#   docker run -d -v relay-data:/data -p 7500:7500 fairdeal relay --data /data \
#     --listen /ip4/0.0.0.0/tcp/7500 --announce /ip4/PUBLIC-IP/tcp/7500 --member PEERID ...
#
# The image runs `fairdeal node --config /data/node.json`. What the node listens on is that file's
# choice: inside a container it must listen on 0.0.0.0 (or the container's address) to be reached
# through published ports; its default, 127.0.0.1, is reachable from inside the container only.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# Dependencies first, so source edits do not invalidate this layer. classic-level (LevelDB) ships
# prebuilt binaries for linux-x64 and linux-arm64, so no compiler is needed.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
# `npm run build` is tsc over src/ (and scripts/, left out here: benchmarks do not ship).
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# config/beacons/ holds the beacon presets (quicknet, default): src/beacon/presets.ts finds them by
# walking up from dist/src/beacon/ to /app/config/beacons. The example node configs come along.
COPY config ./config
# A data directory owned by the image's unprivileged `node` user (uid 1000): the identity key
# (mode 0600), the LevelDB store and the control endpoint's token live there. A new named volume
# starts with this ownership; a bind-mounted host directory must be writable by uid 1000.
RUN chmod 0755 /app/bin/fairdeal.js \
  && ln -s /app/bin/fairdeal.js /usr/local/bin/fairdeal \
  && mkdir -p /data \
  && chown node:node /data \
  && chmod 0700 /data
USER node
VOLUME ["/data"]
# The default ports: table protocol over TCP and over WebSockets. The control endpoint listens on
# the container's 127.0.0.1 only; drive the node with `docker exec … fairdeal hand …`.
# 7500: `fairdeal relay --listen /ip4/0.0.0.0/tcp/7500` (README.md, "Running in Docker").
EXPOSE 7400/tcp 7401/tcp 7402/tcp 7500/tcp
# The node stops cleanly on SIGTERM (`docker stop`): dealt hands are revealed, the rest aborted.
STOPSIGNAL SIGTERM
# The entry point is the fairdeal CLI; the default command is its `node` subcommand.
ENTRYPOINT ["node", "/app/bin/fairdeal.js"]
CMD ["node", "--config", "/data/node.json"]
