#!/usr/bin/env bash
# Builds the npm package's wasm into dist/: release wasm (LTO, size-tuned), wasm-bindgen
# --target web (one output for every runtime; js/*.js pick the loader), then wasm-opt.
# With --if-stale, does nothing when dist/ is newer than every input.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
wasm=$out/tarry_bg.wasm
if [ "${1:-}" = "--if-stale" ] && [ -f "$wasm" ]; then
  newer=$(find src js/host.js Cargo.toml Cargo.lock scripts/build.sh -newer "$wasm" -print -quit 2>/dev/null)
  [ -z "$newer" ] && exit 0
fi

bash scripts/setup.sh
echo "[build] cargo build --release --target wasm32-unknown-unknown" >&2
cargo build --quiet --release --lib --target wasm32-unknown-unknown
rm -rf "$out.tmp"
wasm-bindgen --target web --no-typescript --out-dir "$out.tmp" --out-name tarry \
  target/wasm32-unknown-unknown/release/tarry.wasm
if [ -x node_modules/.bin/wasm-opt ]; then
  node_modules/.bin/wasm-opt -O3 --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$out.tmp/tarry_bg.wasm" -o "$out.tmp/tarry_bg.opt.wasm"
  mv "$out.tmp/tarry_bg.opt.wasm" "$out.tmp/tarry_bg.wasm"
else
  echo "[build] wasm-opt not installed (npm ci brings it); skipping" >&2
fi
rm -rf "$out" && mv "$out.tmp" "$out"
raw=$(stat -c %s "$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "[build] $wasm: $raw bytes, $gz gzipped" >&2
