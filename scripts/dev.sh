#!/usr/bin/env bash
# npm run dev: the service from src/, restarted whenever a file it imports changes (tsx watch), with the
# same configuration as `npm start` (.env, then the environment). On a terminal the JSON log lines are
# rendered by pino-pretty; piped or redirected they stay JSON lines, as in production.
set -euo pipefail
cd "$(dirname "$0")/.."
# The client workspace is built when its dist/ is missing or older than its sources: the service (its
# CLI, the webhook sender's Retry-After reading) imports it from there.
if [ ! -f client/dist/index.js ] || [ -n "$(find client/src -newer client/dist/index.js -print -quit)" ]; then
  npm run build --workspace @petstore/client >/dev/null
fi
if [ -t 1 ]; then
  node_modules/.bin/tsx watch --clear-screen=false src/main.ts | node_modules/.bin/pino-pretty --translateTime 'SYS:HH:MM:ss.l' --ignore pid,hostname
else
  exec node_modules/.bin/tsx watch --clear-screen=false src/main.ts
fi
