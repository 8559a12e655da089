# sandtrail worker/CLI image: Node 20 on Debian with lbzip2 for fast bzip2 decoding.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends lbzip2 bzip2 python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
COPY scripts ./scripts
COPY sample ./sample
COPY kibana ./kibana
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --ignore-scripts
ENTRYPOINT ["node", "bin/sandtrail.js"]
CMD ["--help"]
