#!/usr/bin/env bash
# `npm run test:loaded [-- RUNS]`: the suite (vitest, then the Redis Cluster file alone, as the test
# command runs them) RUNS times in a row (default 5) with two CPU-bound processes beside it, the
# load a CI machine shared with other work sees. Prints each run's outcome and time; exits 1 at the
# first run that fails (its output is kept in the file it names).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
case $runs in '' | *[!0-9]* | 0) echo "usage: npm run test:loaded [-- RUNS]  (RUNS a positive number)" >&2; exit 2 ;; esac
hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_hogs EXIT
for _ in 1 2; do
  node -e 'for (;;) {}' &
  hogs+=($!)
done
echo "test:loaded: two CPU-bound processes (pids ${hogs[*]}) beside ${runs} run(s) of the suite" >&2
for ((i = 1; i <= runs; i++)); do
  out=$(mktemp "${TMPDIR:-/tmp}/sandtrail-test-loaded-$i.XXXXXX")
  start=$(date +%s)
  if SANDTRAIL_TEST_CLUSTER_APART=1 npx vitest run >"$out" 2>&1 &&
    SANDTRAIL_TEST_ES=skip npx vitest run --no-file-parallelism test/pipeline/redisCluster.test.ts test/pipeline/redisFailover.test.ts >>"$out" 2>&1; then
    # vitest colours its summary: the escapes go before the count is read
    echo "run $i/$runs: passed in $(($(date +%s) - start)) s ($(sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -Eo 'Tests +[0-9]+ passed[^)]*\)' | head -1 | tr -s ' '))" >&2
    rm -f "$out"
  else
    echo "run $i/$runs: FAILED after $(($(date +%s) - start)) s; its output is in $out" >&2
    exit 1
  fi
done
echo "test:loaded: ${runs} run(s) in a row passed beside two CPU-bound processes" >&2
