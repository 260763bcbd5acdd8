#!/usr/bin/env bash
# Style kept by tools, not by review: rustfmt, clippy (natively and for wasm32; for the
# component crate also wasm32-wasip2; warnings are errors), Biome (format and lint of js/,
# www/, bench/, scripts/, tests/, examples/, tools/), luacheck (the Redis scripts as Redis runs
# them, and js/redis/lua.js built from them: scripts/lua.mjs), and the docs' own lint
# (scripts/docs/check.mjs, also `npm run docs:check`: links and anchors, no first person,
# issue numbers or commit hashes, a runner for every code block, README.md within 300 lines).
# `npm run lint` runs it; `npm run format` rewrites what the formatters would change.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/host-node.sh
command -v luacheck >/dev/null || bash scripts/setup-redis.sh
cargo fmt --check
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet --lib --tests --target wasm32-unknown-unknown -- -D warnings
# The component crate: natively (its queue logic and tests), and for wasm32-wasip2 (its WASI glue).
cargo clippy --quiet -p tarry-queue-component --all-targets -- -D warnings
cargo clippy --quiet -p tarry-queue-component --lib --target wasm32-wasip2 -- -D warnings
node_modules/.bin/biome check --error-on-warnings .
node scripts/lua.mjs --check
node scripts/docs/check.mjs
