#!/usr/bin/env bash
# `npm run soak [-- SECONDS]`: 10^6 pending items under mixed calls for 10 minutes (or SECONDS),
# memory sampled every 10 s after GC, flat after the first minute, nothing lost
# (tests/soak/soak.mjs). `npm test` runs a 20-second version.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/host-node.sh
bash scripts/build.sh --if-stale
exec node --expose-gc tests/soak/soak.mjs --seconds "${1:-600}"
