#!/usr/bin/env bash
# Every test of tarry, in order from fastest to slowest. `npm test` runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

bash scripts/build.sh --if-stale

step "native Rust tests (core, property test, doctests)"
cargo test --quiet

step "wasm-bindgen-test under Node"
cargo test --target wasm32-unknown-unknown --lib --tests

step "JS tests against the built package (node:test)"
node --test --test-reporter=spec tests/js/
