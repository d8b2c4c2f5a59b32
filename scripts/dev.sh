#!/usr/bin/env bash
# npm run dev: the service from src/, restarted whenever a file it imports changes (tsx watch), with the
# same configuration as `npm start` (.env, then the environment). On a terminal the JSON log lines are
# rendered by pino-pretty; piped or redirected they stay JSON lines, as in production.
set -euo pipefail
cd "$(dirname "$0")/.."
# The client workspace is built once: the service's CLI imports it from its dist/.
[ -f client/dist/index.js ] || npm run build --workspace @petstore/client >/dev/null
if [ -t 1 ]; then
  node_modules/.bin/tsx watch --clear-screen=false src/main.ts | node_modules/.bin/pino-pretty --translateTime 'SYS:HH:MM:ss.l' --ignore pid,hostname
else
  exec node_modules/.bin/tsx watch --clear-screen=false src/main.ts
fi
