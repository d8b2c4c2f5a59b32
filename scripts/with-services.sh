#!/usr/bin/env bash
# `bash scripts/with-services.sh <command…>` (npm run test:services, npm run bench:services): starts a
# throw-away PostgreSQL and Redis on free loopback ports in a temporary directory (never the system
# services, never 5432 or 6379), installing them from Debian's packages when missing; runs the command with
# their addresses in TEST_POSTGRES_URL and TEST_REDIS_URL (and their data directory and pid file, for the
# benchmark's CPU figures); stops everything it started, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
# The balancer recipe (deploy/haproxy.cfg) is tested with Debian's HAProxy.
command -v haproxy >/dev/null || missing+=(haproxy)
[ -n "$(pg_bin)" ] || missing+=(postgresql)
if ((${#missing[@]})); then
  echo "== installing ${missing[*]} from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
PG_BIN=$(pg_bin)

free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })"
}

work=$(mktemp -d)
chmod 755 "$work"
redis_port=$(free_port)
pg_port=$(free_port)
cleanup() {
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  [ -f "$work/pg/postmaster.pid" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
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

mkdir -p "$work/pg" "$work/pgsock"
chown postgres "$work/pg" "$work/pgsock"
runuser -u postgres -- "$PG_BIN/initdb" -D "$work/pg" -A trust -U postgres -E UTF8 >/dev/null
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/pg" -l "$work/pgsock/postgres.log" -w \
  -o "-p $pg_port -k $work/pgsock -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
echo "== $("$PG_BIN/postgres" --version) on 127.0.0.1:$pg_port"

export TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
export TEST_PG_BIN="$PG_BIN"
export TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
export TEST_PG_DATA="$work/pg"
export TEST_REDIS_PID_FILE="$work/redis.pid"
"$@"
