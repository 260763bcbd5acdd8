#!/usr/bin/env bash
# Every test of tarry, in order from fastest to slowest. `npm test` runs this (and CI).
#
#   bash scripts/test.sh           everything
#   bash scripts/test.sh --quick   the edit-test loop (`npm run test:quick`): lint, types,
#                                  cargo test, the Node JS tests; no browsers, Redis, Deno,
#                                  workerd, component or packed-tarball tests
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
[ "${1:-}" = "--quick" ] && quick=true

step() { printf '\n== %s\n' "$*"; }

# A hung test must fail the run, not use up CI's time: every step has a limit (seconds; far
# above what it takes on a 2-core machine), and node:test cancels a test after two minutes
# (Node 20 times each test file as a whole; Node 24 each test, but a timer the cancelled test
# left behind can still hold its process open, so the step's limit is what ends that).
limit() {
  local secs=$1 rc=0; shift
  timeout --kill-after=15 "$secs" "$@" || rc=$?
  # 124: timeout stopped it; 137: it had to be killed after the grace period.
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "!! timed out after ${secs}s: $*" >&2; fi
  return "$rc"
}
node_test=(--test --test-reporter=spec --test-timeout=120000)

# `node` is the Node that runs npm (the machine's); Node 24 is called by path.
source scripts/host-node.sh
node24=node_modules/node24/bin/node

limit 2400 bash scripts/setup.sh            # the wasm32 target, wasm-bindgen-cli, npm ci (when missing or stale)
limit 1200 bash scripts/build.sh --if-stale
limit 300 bash scripts/setup-redis.sh       # Debian's redis-server and lua-check (when missing)
limit 600 bash scripts/setup-postgres.sh    # Debian's postgresql (when missing)
limit 900 bash scripts/setup-consumers.sh types  # TypeScript for the types step (tests/types/, its own lockfile)
if ! $quick; then
  limit 1200 bash scripts/build-component.sh  # the WebAssembly component (adds the wasm32-wasip2 target when missing)
  limit 1200 bash scripts/setup-browser.sh    # Debian's chromium and chromium-driver (when missing)
  limit 900 bash scripts/setup-consumers.sh   # tests/{types,bundlers,fake-timers}: their tools, each from its own lockfile
  limit 300 bash scripts/setup-docs.sh        # scripts/docs: TypeDoc, for the API reference in docs/api/
fi
# wasm-bindgen-test-runner runs tests/browser.rs in Chromium through chromedriver
# (Chromium's arguments: webdriver.json).
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

step "style: cargo fmt, clippy (native and wasm32), Biome (format and lint of the JS), luacheck (the Redis scripts), the docs' lint"
limit 600 bash scripts/lint.sh

step "types: tsc --checkJs over js/ against the binding's generated types; the public .d.ts against the JS, signature by signature"
limit 600 bash scripts/types.sh

step "native Rust tests (core, property test, doctests)"
limit 1500 cargo test --quiet

if $quick; then
  step "JS tests against the built package (node:test), and the Redis scripts' build (no server)"
  limit 600 node "${node_test[@]}" tests/js/*.test.mjs tests/redis/lua.test.mjs
  exit 0
fi

step "wasm-bindgen-test under Node (src/) and in headless Chromium (tests/browser.rs)"
limit 1200 cargo test --target wasm32-unknown-unknown --lib --tests

step "benchmark smoke run (tiny N: every implementation, workload and runtime runs; order verified, no early delivery)"
limit 300 node bench/run.mjs --smoke

step "JS tests against the built package (node:test), and the docs' node blocks"
limit 600 node "${node_test[@]}" tests/js/*.test.mjs

step "docs: the lint's own tests, docs/api/ current with the .d.ts files (TypeDoc), quoted figures current with the results"
limit 300 node "${node_test[@]}" tests/docs/*.test.mjs

step "fuzzers, short seeded runs: the JS face against its model, the snapshot decoder (npm run fuzz: minutes, random seeds)"
limit 300 node "${node_test[@]}" tests/fuzz/fuzz.test.mjs

step "soak, 20 s: 10^6 pending items under mixed calls, memory flat, nothing lost (npm run soak: 10 minutes)"
limit 300 node --expose-gc tests/soak/soak.mjs --seconds 20

step "fake timers: @sinonjs/fake-timers and node:test mock.timers (node:test), Jest, Vitest (under Node 24: it needs >= 22.12)"
limit 300 node "${node_test[@]}" tests/fake-timers/sinon.test.mjs tests/fake-timers/node.test.mjs
(cd tests/fake-timers && limit 300 node --experimental-vm-modules node_modules/jest/bin/jest.js --ci jest.test.mjs)
(cd tests/fake-timers && limit 300 "../../$node24" node_modules/vitest/vitest.mjs run vitest.test.mjs)

step "browser tests in headless Chromium: the demo, hidden tabs, a worker, the docs' browser blocks, the dashboard on a private Redis (playwright-core, node:test)"
limit 600 node "${node_test[@]}" tests/browser/

step "JS tests again under Node 24 ($($node24 --version), from the node24 devDependency)"
limit 600 $node24 "${node_test[@]}" tests/js/*.test.mjs

step "tarry-queue/redis on real Redis: its scripts' build, API, 3 workers + 1 producer, faults (kill -9, crash + AOF restart, SIGSTOP, dropped connections), a 3-master cluster, Sentinel failover (kill -9 of the primary), inspection of 10^6 items, pause and events across processes, the CLI"
limit 600 node "${node_test[@]}" tests/redis/

step "tarry-queue/postgres on real Postgres 15: private clusters (tools/postgres-server.mjs), faults (3 workers + 1 producer, kill -9, crash restart, terminated backends, concurrent migrate), the benchmark's smoke run (under Node 24: pg-boss and graphile-worker need >= 22)"
limit 600 $node24 "${node_test[@]}" tests/postgres/
limit 300 $node24 bench/postgres/run.mjs --smoke

step "Deno tests ($(node_modules/.bin/deno --version | head -1), from the deno devDependency)"
limit 300 node_modules/.bin/deno test --allow-read --allow-write --allow-run tests/deno/

step "WebAssembly component: its crate's tests, then the built component from Python (wasmtime) and Node (jco)"
limit 900 bash scripts/setup-component.sh  # wasmtime (PyPI) in a venv, jco-transpile (npm); under target/wasm-component
limit 900 cargo test --quiet -p tarry-queue-component
limit 300 target/wasm-component/venv/bin/python -m unittest discover -v -s tests/component -p 'test_*.py'
limit 300 node "${node_test[@]}" tests/component/*.test.mjs

step "Cloudflare Workers tests in workerd (miniflare; it needs Node >= 22, so under Node 24)"
limit 600 $node24 "${node_test[@]}" tests/workerd/*.test.mjs

step "the engine contract, one suite (tests/contract): DurableDelayQueue on a fake storage and in workerd, RedisDelayQueue on a private redis-server (under Node 24, for miniflare)"
limit 600 $node24 "${node_test[@]}" tests/contract/*.test.mjs

step "the package as users install it: types (TypeScript 5.9 and 7, attw) from the packed tarball"
limit 600 bash scripts/test-consumers.sh types

step "the package as users install it: Vite 6/7/8 (dev and build), webpack, esbuild, Rollup, plain ESM; page, module and classic worker in Chromium; Node, Bun, Deno"
limit 900 bash scripts/test-consumers.sh bundlers
