#!/usr/bin/env bash
# Resolves the Elasticsearch distribution named in pom.xml from Maven Central (cached in ~/.m2) and
# unpacks it once into the cache directory; prints the distribution's home. Installs a JDK, Maven
# and unzip from Debian when they are missing (as root).
#   scripts/elasticsearch/fetch.sh [VERSION]    (default: the pom's elasticsearch.version)
# SANDTRAIL_ES_CACHE: where distributions are unpacked (default: $TMPDIR/sandtrail-elasticsearch,
# a place an unprivileged user can read when the tests run the node as one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-$(sed -n 's:.*<elasticsearch.version>\(.*\)</elasticsearch.version>.*:\1:p' "$here/pom.xml")}
cache=${SANDTRAIL_ES_CACHE:-${TMPDIR:-/tmp}/sandtrail-elasticsearch}
home="$cache/elasticsearch-$version"
if [ -x "$home/bin/elasticsearch" ] && [ -f "$home/.unpacked" ]; then
  echo "$home"
  exit 0
fi

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "elasticsearch: installing ${need[*]} from Debian" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "elasticsearch: missing ${need[*]}: install them (apt-get install ${need[*]})" >&2
    exit 1
  fi
fi

mkdir -p "$cache"
chmod 755 "$cache"
zips="$cache/zips"
zip="$zips/elasticsearch-$version.zip"
if [ ! -f "$zip" ]; then
  echo "elasticsearch: resolving $version from Maven Central (about 100 MB the first time)" >&2
  mvn -q -B -f "$here/pom.xml" -Delasticsearch.version="$version" \
    dependency:copy-dependencies -DoutputDirectory="$zips" -DincludeTypes=zip >&2
  [ -f "$zip" ] || { echo "elasticsearch: Maven resolved no $zip" >&2; exit 1; }
fi
tmp=$(mktemp -d "$cache/unpack.XXXXXX")
unzip -q "$zip" -d "$tmp"
chmod -R a+rX "$tmp"
touch "$tmp/elasticsearch-$version/.unpacked"
# a concurrent fetch may have won the rename: its copy is as good as ours
mv -T "$tmp/elasticsearch-$version" "$home" 2>/dev/null || true
rm -rf "$tmp"
echo "$home"
