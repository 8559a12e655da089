#!/usr/bin/env bash
# Quick start: set everything up, ingest the bundled sample feed into SQLite through the real
# queue, and show example pivot queries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p .data
exec node bin/sandtrail.js demo --store "sqlite:${SANDTRAIL_DEMO_DB:-.data/demo.db}" "$@"
