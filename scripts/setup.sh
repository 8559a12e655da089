#!/usr/bin/env bash
# Prepares a fresh Debian machine with Node 20: system packages sandtrail uses (redis-server for the
# queue when no REDIS_URL is given, lbzip2 for fast bzip2 decoding), then npm dependencies and the build.
# SANDTRAIL_SETUP_ELASTICSEARCH=1 (the test command sets it) also resolves the Elasticsearch the
# tests run (scripts/elasticsearch/fetch.sh: a JDK, Maven and unzip from Debian, the distribution
# from Maven Central). SANDTRAIL_SETUP_TEST_TOOLS=1 (the test command sets it too) also installs
# pbzip2, the third bzip2 decoder sandtrail can use, so that its decoder tests run, and Python with
# the ecosystem's checkers the export tests run (scripts/test-python.sh, from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || [ -n "${REDIS_URL:-}" ] || need+=(redis-server)
command -v lbzip2 >/dev/null 2>&1 || need+=(lbzip2)
command -v bzip2 >/dev/null 2>&1 || need+=(bzip2)
if [ "${SANDTRAIL_SETUP_TEST_TOOLS:-}" = 1 ]; then
  command -v pbzip2 >/dev/null 2>&1 || need+=(pbzip2)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  # Debian's python3 makes virtual environments only with python3-venv (ensurepip)
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]} from Debian" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing ${need[*]}; install them (apt-get install ${need[*]}) or set REDIS_URL" >&2
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (better-sqlite3 compiles from source: about a minute)" >&2
  npm ci --no-audit --no-fund --loglevel=error
else
  npm run --silent build
fi

if [ "${SANDTRAIL_SETUP_TEST_TOOLS:-}" = 1 ]; then
  bash scripts/test-python.sh
fi

if [ "${SANDTRAIL_SETUP_ELASTICSEARCH:-}" = 1 ] && [ -z "${ELASTICSEARCH_URL:-}" ]; then
  bash scripts/elasticsearch/fetch.sh >/dev/null
fi
