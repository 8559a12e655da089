#!/usr/bin/env bash
# The whole test suite, from a fresh clone: setup, lint, format check, typecheck, tests, bench smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
SANDTRAIL_SETUP_ELASTICSEARCH=1 SANDTRAIL_SETUP_TEST_TOOLS=1 bash scripts/setup.sh
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
# every skip of the runs below, listed last and judged against test/accepted-skips.txt
SANDTRAIL_TEST_SKIP_LOG=$(mktemp "${TMPDIR:-/tmp}/sandtrail-skips.XXXXXX")
export SANDTRAIL_TEST_SKIP_LOG
# the Redis Cluster tests kill masters and time their outages: they run alone, after the rest,
# not beside files that load both cores (there they have hung past the 300 s test timeout)
SANDTRAIL_TEST_CLUSTER_APART=1 npx vitest run "$@"
if [ $# -eq 0 ]; then
  echo "== tests: Redis Cluster, alone" >&2
  # no Elasticsearch case in it: no node started for it; one file after the other, since two
  # clusters electing replicas at once on two slow cores missed a failover (the backfill then
  # waited out worker.redisWaitMs, 300 s, the test's whole time)
  SANDTRAIL_TEST_ES=skip npx vitest run --no-file-parallelism test/pipeline/redisCluster.test.ts test/pipeline/redisFailover.test.ts
fi
# A bench run in a directory of its own (so a developer's bench/out is neither clobbered nor
# reused): removed when the run passes, kept and named when it fails. Figures are not asserted,
# except the month soak's (a store or Redis that grows once the retention window is full fails it).
#   smoke NAME WHAT-IS-KEPT SCRIPT ARGS...
smoke() {
  local name=$1 kept=$2 script=$3
  shift 3
  echo "== $name smoke" >&2
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/sandtrail-${name// /-}-smoke.XXXXXX")
  if npm run --silent "$script" -- "$@" --out "$out"; then
    rm -rf "$out"
  else
    echo "$name smoke failed; $kept in $out" >&2
    exit 1
  fi
}
# The smallest bench that still runs every phase (raw, normalize, the official client's Python
# loop when python3 exists, e2e through Redis and SQLite, and the backfill CLI; 3 files of ~0.6 MB):
# it only has to finish with its ids verified (on 1 MB the Elasticsearch node's setup dominates:
# the ingest ratio is printed, not judged).
smoke bench "its feed and worker logs are" bench --mb 1 --per-minute 50 --timeout 120 --min-es-ratio 0
# An export of a small and a larger cluster in both formats: every behaviour must be exported (the
# RSS ratio is printed, not judged: clusters this small do not fill the window of ids remembered).
smoke "export bench" "its store is" bench:export --small 300 --large 3000 --max-rss-ratio 0
# The hunting reads on a small store built through the SQLite sink: every read must answer.
smoke "hunt bench" "its store is" bench:hunt --behaviours 5000 --runs 2
# The same reads on the same documents written through the Elasticsearch sink, on a node of its own:
# every read must answer right (the 500 ms target is the full run's to judge, at 1 M behaviours).
smoke "hunt bench on Elasticsearch" "its output is" bench:hunt --store es --behaviours 5000 --runs 2 --max-p95-ms 0
# What retention costs against writing, on a small store: the run only has to end with the store
# holding what it should.
smoke "retention bench" "its store is" bench:retention --behaviours 900 --days 3
# Write cost as the store grows, on two small sizes: the targets (rate, bytes written) must hold.
smoke "growth bench" "its store is" bench:growth --sizes 5000,20000 --per-day 100000 --slim --chunk 2500 --runs 1
# Write cost on Elasticsearch as day indices add up, at two small sizes on a node of its own: it only
# has to finish (every write ok).
echo "== es partitions bench smoke" >&2
npm run --silent bench:es-partitions -- --days 2,6 --per-day 5 --chunk 20 --runs 2 >/dev/null
# A few simulated days through the real workers with a retention of 2 days: the store and Redis
# must stay flat once the window is full.
smoke "month soak" "its store and feed are" soak:month --days 5 --retention-days 2 --minutes 2 --per-minute 10
smoke "month soak into Elasticsearch" "its feed is" soak:month --store es --days 5 --retention-days 2 --minutes 2 --per-minute 10
# The skipped tests, last: each with its reason. One not on the accepted list fails the run.
echo "== skipped tests" >&2
accepted=${SANDTRAIL_TEST_ACCEPTED_SKIPS:-test/accepted-skips.txt}
unaccepted=0
patterns=$(grep -v -e '^#' -e '^[[:space:]]*$' "$accepted" || true)
if [ -s "$SANDTRAIL_TEST_SKIP_LOG" ]; then
  while IFS= read -r skip; do
    if [ -n "$patterns" ] && grep -qF -- "$patterns" <<<"$skip"; then
      echo "skipped (accepted): $skip"
    else
      echo "skipped, NOT on $accepted: $skip"
      unaccepted=$((unaccepted + 1))
    fi
  done <"$SANDTRAIL_TEST_SKIP_LOG"
else
  echo "no test skipped"
fi
rm -f "$SANDTRAIL_TEST_SKIP_LOG"
if [ "$unaccepted" -gt 0 ]; then
  echo "$unaccepted skipped test(s) not on $accepted: make them run here, or accept them there with the reason" >&2
  exit 1
fi
