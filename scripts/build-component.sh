#!/usr/bin/env bash
# Builds the WebAssembly component into target/wasm-component/tarry.wasm: the crate component/
# (the core behind wit/tarry.wit) for wasm32-wasip2, with Cargo.toml's `component` profile
# (release, opt-level "s", stripped). The target's linker, wasm-component-ld, turns the
# core module into a component. Cargo's own freshness check makes a second run quick.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "[build-component] adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi
cargo build --quiet -p tarry-queue-component --target wasm32-wasip2 --profile component
out=target/wasm-component/tarry.wasm
mkdir -p target/wasm-component
cp target/wasm32-wasip2/component/tarry_queue_component.wasm "$out"
echo "[build-component] $out: $(stat -c %s "$out") bytes, $(gzip -9 -c "$out" | wc -c) gzipped" >&2
