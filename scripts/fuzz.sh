#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS]`: the fuzzers for minutes on random seeds (600 s in all by default,
# or $FUZZ_SECONDS), where `npm test` runs short seeded runs. Two thirds of the time: the JS
# face against its model and the snapshot decoder (tests/fuzz/run.mjs); the rest: the core's
# property tests (src/tests.rs: props_* and the heap at every arity) with many cases in a
# release build. Each prints what it found (a failing JS run prints its seed and a shrunk
# replay command; proptest prints the minimal failing input). Exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${FUZZ_SECONDS:-600}}
source scripts/host-node.sh
bash scripts/build.sh --if-stale || exit 1

status=0
printf '\n== the JS face against its model, and the snapshot decoder (%s s)\n' "$((secs * 2 / 3))"
node tests/fuzz/run.mjs --seconds "$((secs * 2 / 3))" || status=1

# About 1,600 cases a second for the two properties together, in release (50,000 in 31 s
# here), so the remaining third of the time.
cases=${PROPTEST_CASES:-$((secs / 3 * 1500))}
printf '\n== the core, the Driver and the heap (every arity) against their models: %s cases each\n' "$cases"
t0=$(date +%s)
PROPTEST_CASES=$cases cargo test --release --quiet --lib -- props heaps_of_every_benchmarked_arity || status=1
echo "core property tests: $cases cases of each property in $(($(date +%s) - t0)) s (with the build)"

[ "$status" -eq 0 ] && echo "fuzz: found nothing" || echo "fuzz: FOUND SOMETHING (above)"
exit "$status"
