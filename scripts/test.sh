#!/usr/bin/env bash
# The whole test suite, from a fresh clone: setup, lint, format check, typecheck, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== lint" >&2
npx eslint .
npx prettier --check . >/dev/null || { npx prettier --check .; exit 1; }
echo "== typecheck" >&2
npx tsc -p tsconfig.json --noEmit
echo "== cycles" >&2
node scripts/check-cycles.mjs
echo "== tests" >&2
node scripts/run-tests.mjs "$@"
