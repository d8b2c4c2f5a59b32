#!/usr/bin/env bash
# npm run test:services: starts throw-away servers (today Redis; PostgreSQL joins with the rest of the
# scale-out work) on free loopback ports in a temporary directory, never the system services, installing
# them from Debian's packages when missing; runs the suites under test/services against them; stops
# everything it started, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null; then
  echo "== installing redis-server from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi

free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })"
}

work=$(mktemp -d)
redis_port=$(free_port)
cleanup() {
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$work" --daemonize yes --logfile "$work/redis.log" --pidfile "$work/redis.pid"
for _ in $(seq 100); do
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
echo "== redis $(redis-server --version | cut -d' ' -f3) on 127.0.0.1:$redis_port"

export TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
npx vitest run --config vitest.services.config.ts
