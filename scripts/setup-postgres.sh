#!/usr/bin/env bash
# Installs what the Postgres layer needs, idempotently and fast when present: Debian's
# postgresql (15 on bookworm: initdb, pg_ctl, postgres, psql), for its tests, benchmark and
# example. They start private clusters on free loopback ports (tools/postgres-server.mjs), so
# the cluster and service the package may create are not used. pg, pg-boss and
# graphile-worker are npm devDependencies (scripts/setup.sh).
set -euo pipefail

say() { printf '[setup-postgres] %s\n' "$*" >&2; }

# Where tools/postgres-server.mjs looks: pg_config's bindir, then Debian's versioned path.
have_initdb() {
  local bindir
  bindir=$(pg_config --bindir 2>/dev/null || true)
  [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if ! have_initdb || ! command -v psql >/dev/null; then
  say "installing postgresql from Debian's packages (a minute, once)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # The package tries to create and start its own cluster, which fails where there is no init
  # system; the tests start private clusters, so only the binaries count.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null || true
  have_initdb || { say "apt-get could not install postgresql (no initdb)"; exit 1; }
fi
# initdb refuses to run as root: the private clusters run as the postgres user the package creates.
if [ "$(id -u)" -eq 0 ] && ! id -u postgres >/dev/null 2>&1; then
  say "no postgres user to run the private clusters as (the postgresql package creates it)"
  exit 1
fi
