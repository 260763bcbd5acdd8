#!/usr/bin/env bash
# Installs the tools of the consumer tests, each folder from its own lockfile, idempotently
# and fast when present: tests/types/ (TypeScript 5.9 and 7, arethetypeswrong, @types/node),
# tests/bundlers/ (Vite 6, 7 and 8, webpack, esbuild, Rollup, Bun) and tests/fake-timers/
# (@sinonjs/fake-timers, Jest, Vitest). They live apart from the root install so that
# developing tarry does not need them and users never see them.
#
#   bash scripts/setup-consumers.sh [types] [bundlers] [fake-timers]    (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(types bundlers fake-timers)
for folder in "${folders[@]}"; do
  dir=tests/$folder
  [ -f "$dir/package.json" ] || { echo "setup-consumers: no $dir/package.json" >&2; exit 2; }
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    printf '[setup] installing the npm packages of %s\n' "$dir" >&2
    # `npm install` from the lockfile, not `npm ci`: Vite 8 names an optional dependency
    # (napi-windows-process-start-time, for Windows) that this registry does not have, and
    # npm ci refuses a lockfile without it while npm install skips it like any optional one.
    (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error)
  fi
done
