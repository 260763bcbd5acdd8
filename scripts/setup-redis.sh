#!/usr/bin/env bash
# Installs what the Redis layer needs, idempotently and fast when present: Debian's
# redis-server (which brings redis-cli), for its tests, benchmark and example, and Debian's
# lua-check (luacheck), which scripts/lint.sh runs on its Lua scripts. The tests start private
# instances on free loopback ports (tools/redis-server.mjs), so the service the package
# may start is not used. ioredis and bullmq are npm devDependencies (scripts/setup.sh).
set -euo pipefail

say() { printf '[setup-redis] %s\n' "$*" >&2; }

missing=()
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server)
command -v luacheck >/dev/null || missing+=(lua-check)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} from Debian's packages (a minute, once)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # redis-server also tries to start its own service, which fails where there is no init
  # system; the tests start private servers, so only the binaries count.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || true
  for tool in redis-server redis-cli luacheck; do
    command -v "$tool" >/dev/null || { say "apt-get could not install $tool"; exit 1; }
  done
fi
version=$(redis-server --version | grep -o 'v=[0-9.]*' | cut -d= -f2)
# Scripts call TIME and PUBLISH and rely on effects replication: Redis 7 or later.
if [ "${version%%.*}" -lt 7 ]; then
  say "redis-server $version is too old: tarry-queue/redis needs Redis >= 7"
  exit 1
fi
