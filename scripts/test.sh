#!/usr/bin/env bash
# The whole test suite, from a fresh clone: setup, lint, format check, typecheck, tests, bench smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The dashboard's browser test drives Debian's chromium (playwright-core, no browser download);
# where it cannot be installed the test is skipped with a message saying so.
if [ ! -x /usr/bin/chromium ] && [ -z "${SANDTRAIL_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium from Debian for the dashboard browser test" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; } ||
      echo "setup: chromium could not be installed: the dashboard browser test will be skipped" >&2
  else
    echo "setup: no /usr/bin/chromium: the dashboard browser test will be skipped" >&2
  fi
fi
echo "== lint" >&2
npx eslint .
npx prettier --check . >/dev/null || { npx prettier --check .; exit 1; }
echo "== typecheck" >&2
npx tsc -p tsconfig.json --noEmit
echo "== cycles" >&2
node scripts/check-cycles.mjs
echo "== tests" >&2
npx vitest run "$@"
# The smallest bench that still runs every phase (raw, normalize, the official client's Python
# loop when python3 exists, e2e through Redis and SQLite, and the backfill CLI; 3 files of ~0.6 MB):
# it only has to finish with its ids verified; figures are not asserted. Its own directory, so a
# developer's bench/out feed is neither clobbered nor reused.
echo "== bench smoke" >&2
bench_out=$(mktemp -d "${TMPDIR:-/tmp}/sandtrail-bench-smoke.XXXXXX")
if npm run --silent bench -- --mb 1 --per-minute 50 --timeout 120 --out "$bench_out"; then
  rm -rf "$bench_out"
else
  echo "bench smoke failed; its feed and worker logs are in $bench_out" >&2
  exit 1
fi
# The hunting reads on a small store built through the SQLite sink: every read must answer (times
# are reported, not asserted). Its own directory, so bench/out/hunt is neither clobbered nor reused.
echo "== hunt bench smoke" >&2
hunt_out=$(mktemp -d "${TMPDIR:-/tmp}/sandtrail-hunt-smoke.XXXXXX")
if npm run --silent bench:hunt -- --behaviours 5000 --runs 2 --out "$hunt_out"; then
  rm -rf "$hunt_out"
else
  echo "hunt bench smoke failed; its store is in $hunt_out" >&2
  exit 1
fi
# What retention costs against writing, on a small store (figures reported, not asserted): the run
# only has to end with the store holding what it should. Its own directory, as above.
echo "== retention bench smoke" >&2
retention_out=$(mktemp -d "${TMPDIR:-/tmp}/sandtrail-retention-smoke.XXXXXX")
if npm run --silent bench:retention -- --behaviours 900 --days 3 --out "$retention_out"; then
  rm -rf "$retention_out"
else
  echo "retention bench smoke failed; its store is in $retention_out" >&2
  exit 1
fi
