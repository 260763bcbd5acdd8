#!/usr/bin/env bash
# The package as users install it, from the packed tarball (tests/packed.mjs):
#   types     the d.ts against the JS, and typed consumers under tsc --strict (tests/types/)
#   bundlers  Vite 6, 7 and 8 (dev and build), webpack, esbuild, Rollup and plain ESM with an
#             import map, each a page, a module worker and a classic worker in Chromium, with
#             no configuration for tarry and no init(); Node, Bun and Deno
#             running the README's examples (tests/bundlers/)
# `npm run test:types` and `npm run test:bundlers` run one; scripts/test.sh runs both.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/host-node.sh

case "${1:-}" in
  types) bash scripts/setup-consumers.sh types ;;
  bundlers) bash scripts/setup-consumers.sh bundlers ;;
esac
bash scripts/build.sh --if-stale
case "${1:-}" in
  # tests/types/surface.test.mjs (the d.ts against the JS, in the tree) is scripts/types.sh's.
  types) exec node --test --test-reporter=spec --test-timeout=300000 tests/types/types.test.mjs ;;
  bundlers) exec node --test --test-reporter=spec --test-timeout=300000 tests/bundlers/*.test.mjs ;;
  *) echo "usage: $0 types|bundlers" >&2; exit 2 ;;
esac
