#!/usr/bin/env bash
# Installs the hosts that tests/component/ runs the WebAssembly component in, under
# target/wasm-component/ (nothing global), idempotently and fast when present:
#   venv/  Python's wasmtime (PyPI), pinned in tests/component/requirements.txt
#   jco/   jco-transpile and preview2-shim (npm), pinned by tests/component/package-lock.json
# The wasm32-wasip2 target comes with scripts/build-component.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup-component] %s\n' "$*" >&2; }
dir=target/wasm-component
mkdir -p "$dir"

venv=$dir/venv
want=$(sed -n 's/^wasmtime==//p' tests/component/requirements.txt)
have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("wasmtime"))' 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  say "installing Python's wasmtime $want into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/component/requirements.txt
fi

# npm ci when the copy of the lockfile there is missing or older than ours.
jco=$dir/jco
if [ ! -f "$jco/node_modules/.package-lock.json" ] || [ tests/component/package-lock.json -nt "$jco/node_modules/.package-lock.json" ]; then
  say "installing jco-transpile into $jco"
  mkdir -p "$jco"
  cp tests/component/package.json tests/component/package-lock.json "$jco/"
  (cd "$jco" && npm ci --no-audit --no-fund --loglevel=error)
fi
