#!/usr/bin/env bash
# Installs what the browser tests need, idempotently and fast when present: Debian's
# chromium and chromium-driver (same version, from one source package). Nothing else can
# bring a browser here: only package registries are reachable, so no `playwright install`.
# playwright-core itself is an npm devDependency (scripts/setup.sh runs npm ci).
set -euo pipefail

say() { printf '[setup-browser] %s\n' "$*" >&2; }

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ ${#missing[@]} -ne 0 ]; then
  say "installing ${missing[*]} from Debian's packages (a minute or two, once)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# The driver must match the browser, or chromedriver refuses to start a session.
browser=$(/usr/bin/chromium --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1 | cut -d. -f1)
driver=$(/usr/bin/chromedriver --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1 | cut -d. -f1)
if [ "$browser" != "$driver" ]; then
  say "chromium $browser and chromedriver $driver differ: apt-get install --only-upgrade chromium chromium-driver"
  exit 1
fi
