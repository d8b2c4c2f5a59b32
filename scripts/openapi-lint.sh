#!/usr/bin/env bash
# npm run lint:openapi: starts the built service (dist/) on a free loopback port with a throw-away SQLite
# file and default settings, downloads the document it serves at /v1/openapi.json, and lints it with
# Redocly (recommended) and Spectral (spectral:oas, .spectral.yaml). Fails on any error OR warning from
# either: Redocly's exit code only counts errors, so its JSON report's totals are checked here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })"
}

work=$(mktemp -d)
server=''
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# GET url > file with node's fetch (no curl needed); fails unless 2xx.
fetch_to() {
  node -e 'fetch(process.argv[2]).then(async (r) => { if (!r.ok) throw new Error(`${r.status} from ${process.argv[2]}`); require("node:fs").writeFileSync(process.argv[1], Buffer.from(await r.arrayBuffer())) })' "$1" "$2"
}

port=$(free_port)
base="http://127.0.0.1:$port"
# A clean environment, run from the temporary directory (no .env is read): the document of the defaults.
(cd "$work" && exec env -i PATH="$PATH" HOME="${HOME:-$work}" DATABASE_URL="sqlite:$work/x.sqlite" HOST=127.0.0.1 \
  PORT="$port" LOG_LEVEL=warn node "$root/dist/main.js") &
server=$!
for _ in $(seq 100); do
  fetch_to /dev/null "$base/healthz" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "openapi-lint: the service exited during start-up" >&2; exit 1; }
  sleep 0.1
done
document="$work/openapi.json"
fetch_to "$document" "$base/v1/openapi.json"
echo "== linting $base/v1/openapi.json"

failed=0
echo "== redocly lint --extends=recommended"
npx --no-install redocly lint --extends=recommended --format=json --max-problems=1000 "$document" \
  >"$work/redocly.json" 2>"$work/redocly.err" || true
node -e '
const fs = require("node:fs")
let report
try {
  report = JSON.parse(fs.readFileSync(process.argv[1], "utf8"))
} catch {
  process.stderr.write(fs.readFileSync(process.argv[2], "utf8"))
  console.error("redocly: no report")
  process.exit(1)
}
for (const problem of report.problems) {
  const where = problem.location?.[0]?.pointer ?? ""
  console.log(`  ${problem.severity} ${problem.ruleId} ${where}: ${problem.message}`)
}
const { errors, warnings, ignored } = report.totals
console.log(`redocly: ${errors} errors, ${warnings} warnings, ${ignored} ignored`)
process.exit(errors + warnings + ignored > 0 ? 1 : 0)
' "$work/redocly.json" "$work/redocly.err" || failed=1

echo "== spectral lint --ruleset .spectral.yaml --fail-severity=warn"
npx --no-install spectral lint --ruleset "$root/.spectral.yaml" --fail-severity=warn "$document" || failed=1

exit "$failed"
