#!/usr/bin/env bash
# Benchmarks tarry against its peers (`npm run bench`, `npm run bench -- --full`); see
# bench/run.mjs for the options. The native comparison with tokio-util is `cargo bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --if-stale
exec node bench/run.mjs "$@"
