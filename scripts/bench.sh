#!/usr/bin/env bash
# Benchmarks tarry against its peers and measures its cost as the queue grows (`npm run
# bench`, `npm run bench -- --full`); see bench/options.mjs for the options. The native
# comparison with tokio-util is `cargo bench`. `npm run bench -- --loading`: what loading
# the wasm costs (bench/loading/run.mjs); `-- --redis`: tarry-queue/redis (bench/redis/);
# `-- --events`: what events and metrics cost on the hot path (bench/events/); `-- --postgres`:
# tarry-queue/postgres against pg-boss and graphile-worker (bench/postgres/); `-- --calls`: the
# cost of one call, tarry before and after beside BullMQ and the plain-JS heap (bench/calls/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/host-node.sh
# tarry-queue/redis against BullMQ on a private Redis (bench/redis/run.mjs): no wasm needed,
# so no build; ioredis and bullmq are devDependencies (scripts/setup.sh installs them).
if [ "${1:-}" = "--redis" ]; then
  shift
  bash scripts/setup.sh npm
  bash scripts/setup-redis.sh
  exec node bench/redis/run.mjs "$@"
fi
# tarry-queue/postgres against pg-boss 12 and graphile-worker 0.18 on a private Postgres 15
# (bench/postgres/run.mjs): under Node 24, as the peers need Node >= 22 (and tarry gets the same).
if [ "${1:-}" = "--postgres" ]; then
  shift
  bash scripts/setup.sh npm
  bash scripts/setup-postgres.sh
  exec node_modules/node24/bin/node bench/postgres/run.mjs "$@"
fi
bash scripts/build.sh --if-stale
# What events and metrics cost on each engine's hot path (bench/events/run.mjs): a private Redis too.
if [ "${1:-}" = "--events" ]; then
  shift
  bash scripts/setup-redis.sh
  exec "${npm_node_execpath:-node}" bench/events/run.mjs "$@"
fi
# The cost of one call, before and after (bench/calls/run.mjs): a private Redis, esbuild for
# the page's weight, and the earlier commit built in target/ by its own build script.
if [ "${1:-}" = "--calls" ]; then
  shift
  bash scripts/setup-redis.sh
  bash scripts/setup-consumers.sh # esbuild
  exec "${npm_node_execpath:-node}" bench/calls/run.mjs "$@"
fi
# What loading costs (bytes, the first queue in Chromium, Node and Deno): bench/loading/run.mjs.
if [ "${1:-}" = "--loading" ]; then
  shift
  bash scripts/setup-browser.sh
  bash scripts/setup-consumers.sh # esbuild, for the app bundle's size
  exec "${npm_node_execpath:-node}" bench/loading/run.mjs "$@"
fi
# The growth curve runs in Chromium too (the full run and the smoke run): the browser tests' Chromium.
bash scripts/setup-browser.sh
exec node bench/run.mjs "$@"
