#!/usr/bin/env bash
# Installs the tools of `npm run docs` (TypeDoc and its Markdown plugin, TypeScript) into
# scripts/docs/node_modules from scripts/docs/package-lock.json, apart from the root install
# so that developing tarry does not need them; idempotent, fast when present.
set -euo pipefail
cd "$(dirname "$0")/docs"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  printf '[setup] installing the npm packages of scripts/docs\n' >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
