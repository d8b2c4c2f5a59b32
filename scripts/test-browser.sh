#!/usr/bin/env bash
# npm run test:browser: installs Debian's chromium when /usr/bin/chromium is missing, then drives it with
# playwright-core (no browser download) against /v1/docs and /dashboard on running servers (test/browser).
# The screenshots land in test-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
echo "== $(/usr/bin/chromium --version 2>/dev/null)"

npx vitest run --config vitest.browser.config.ts "$@"
