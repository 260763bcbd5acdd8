#!/usr/bin/env bash
# The types against the code (`npm run typecheck`; the "types" step of `npm test` and of
# `npm run test:quick`):
#   1. tsc --checkJs over js/ (tsconfig.json), against the binding's own types: the .d.ts that
#      wasm-bindgen generates for dist/tarry.js, so that a renamed or changed method of
#      src/binding/mod.rs fails here in the face that calls it;
#   2. the hand-written public .d.ts against the JS, export by export and signature by
#      signature (tests/types/surface.test.mjs);
#   3. every JS and TS code block of README.md and docs/ under tsc --strict, module nodenext,
#      with its runner's environment types (tests/types/docs.test.mjs).
# TypeScript comes from tests/types/ (its own lockfile; scripts/setup-consumers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/host-node.sh

bash scripts/setup-consumers.sh types
bash scripts/build.sh --if-stale

# The binding's types, beside the glue they describe, when missing or older than it.
if [ ! -f dist/tarry.d.ts ] || [ dist/tarry.js -nt dist/tarry.d.ts ]; then
  wasm=target/wasm32-unknown-unknown/release/tarry_queue.wasm
  [ -f "$wasm" ] || cargo build --quiet --release --lib --target wasm32-unknown-unknown
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  wasm-bindgen --target web --out-dir "$tmp" --out-name tarry "$wasm"
  cp "$tmp/tarry.d.ts" dist/tarry.d.ts
fi

tests/types/node_modules/.bin/tsc -p tsconfig.json
node --test --test-reporter=spec --test-timeout=120000 tests/types/surface.test.mjs tests/types/docs.test.mjs
