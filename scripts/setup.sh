#!/usr/bin/env bash
# Installs what building and testing tarry needs, idempotently and fast when present:
# the wasm32 target, the wasm-bindgen CLI matching Cargo.toml's pin, and npm packages.
#
#   bash scripts/setup.sh        all of it
#   bash scripts/setup.sh npm    the npm packages only (what the Redis entry needs: no wasm)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*" >&2; }

npm_packages() {
  # npm ci when node_modules is missing or older than the lockfile.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "installing npm packages"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}
if [ "${1:-}" = "npm" ]; then
  npm_packages
  exit 0
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

want=$(sed -n 's/^wasm-bindgen = .*"=\([0-9.]*\)".*/\1/p' Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (a few minutes, once)"
  # Not --locked: the CLI's lockfile names a crate version this registry lacks.
  cargo install wasm-bindgen-cli --version "=$want"
fi

npm_packages
