#!/usr/bin/env bash
# Builds the npm package's wasm into dist/: release wasm (LTO, size-tuned), wasm-bindgen
# --target web (one output for every runtime; js/*.js pick the loader), then wasm-opt.
# With --if-stale, does nothing when dist/ is newer than every input.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
wasm=$out/tarry_bg.wasm
stale() {
  [ ! -f "$wasm" ] || [ -n "$(find src Cargo.toml Cargo.lock scripts/build.sh -newer "$wasm" -print -quit 2>/dev/null)" ]
}
[ "${1:-}" = "--if-stale" ] && ! stale && exit 0

# One build at a time (tests and demo may start builds together); re-check once we hold it.
mkdir -p target
exec 9>target/.build.lock
flock 9
[ "${1:-}" = "--if-stale" ] && ! stale && exit 0

bash scripts/setup.sh
echo "[build] cargo build --release --target wasm32-unknown-unknown" >&2
cargo build --quiet --release --lib --target wasm32-unknown-unknown
tmp=$(mktemp -d "$out.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
wasm-bindgen --target web --no-typescript --out-dir "$tmp" --out-name tarry \
  target/wasm32-unknown-unknown/release/tarry_queue.wasm
if [ -x node_modules/.bin/wasm-opt ]; then
  node_modules/.bin/wasm-opt -O3 --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$tmp/tarry_bg.wasm" -o "$tmp/tarry_bg.opt.wasm"
  mv "$tmp/tarry_bg.opt.wasm" "$tmp/tarry_bg.wasm"
else
  echo "[build] wasm-opt not installed (npm ci brings it); skipping" >&2
fi
rm -rf "$out" && mv "$tmp" "$out"
trap - EXIT
raw=$(stat -c %s "$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "[build] $wasm: $raw bytes, $gz gzipped" >&2
