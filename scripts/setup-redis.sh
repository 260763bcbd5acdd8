#!/usr/bin/env bash
# Installs what the Redis tests, benchmark and example need, idempotently and fast when
# present: Debian's redis-server (which brings redis-cli). They start private instances on
# free loopback ports (scripts/redis-server.mjs), so the service the package may start is not
# used. ioredis and bullmq are npm devDependencies (scripts/setup.sh runs npm ci).
set -euo pipefail

say() { printf '[setup-redis] %s\n' "$*" >&2; }

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  say "installing redis-server from Debian's packages (a minute, once)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # The package also tries to start its own service, which fails where there is no init
  # system; the tests start private servers, so only the binaries count.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null || true
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    say "apt-get could not install redis-server"
    exit 1
  fi
fi
version=$(redis-server --version | grep -o 'v=[0-9.]*' | cut -d= -f2)
# Scripts call TIME and PUBLISH and rely on effects replication: Redis 7 or later.
if [ "${version%%.*}" -lt 7 ]; then
  say "redis-server $version is too old: tarry-queue/redis needs Redis >= 7"
  exit 1
fi
