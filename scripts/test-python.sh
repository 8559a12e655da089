#!/usr/bin/env bash
# The Python tools the tests check sandtrail's exports and servers with, from PyPI: a virtual
# environment of its own (made again when test/requirements.txt changes), outside the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${XDG_CACHE_HOME:-$HOME/.cache}/sandtrail/test-python"
stamp="$dir/.requirements"
if [ -x "$dir/bin/python3" ] && [ -f "$stamp" ] && cmp -s test/requirements.txt "$stamp"; then exit 0; fi
echo "setup: installing the Python test tools (test/requirements.txt) into $dir" >&2
rm -rf "$dir"
python3 -m venv "$dir"
"$dir/bin/python3" -m pip install --quiet --disable-pip-version-check -r test/requirements.txt
cp test/requirements.txt "$stamp"
