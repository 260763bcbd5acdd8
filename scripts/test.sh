#!/usr/bin/env bash
# Every test of tarry, in order from fastest to slowest. `npm test` runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

bash scripts/build.sh --if-stale
bash scripts/setup-browser.sh
# wasm-bindgen-test-runner runs tests/browser.rs in Chromium through chromedriver
# (Chromium's arguments: webdriver.json).
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

step "native Rust tests (core, property test, doctests)"
cargo test --quiet

step "wasm-bindgen-test under Node (src/) and in headless Chromium (tests/browser.rs)"
cargo test --target wasm32-unknown-unknown --lib --tests

step "JS tests against the built package (node:test)"
node --test --test-reporter=spec tests/js/

step "browser tests in headless Chromium: the demo, hidden tabs, a worker (playwright-core, node:test)"
node --test --test-reporter=spec tests/browser/
