#!/usr/bin/env bash
# Runs a command on a loaded machine: N CPU-bound processes spin beside it for as long as it
# runs, so that a test which assumes the event loop runs on time fails here as it would on a
# busy CI box. npm test must pass like this before a change is done.
#
#   bash scripts/load.sh                       npm test (scripts/test.sh) beside 2 spinners
#   bash scripts/load.sh 4 node --test tests/js/events.test.mjs
#                                              any command, beside 4
#
# It prints the load average before and after and the command's time, and exits with the
# command's status. The spinners are this script's children, stopped by their ids when the
# command ends; each also stops by itself after LOAD_LIMIT seconds (default 3600), should
# this script be killed before it can stop them.
set -euo pipefail
cd "$(dirname "$0")/.."

spinners=2
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  spinners=$1
  shift
fi
[ $# -gt 0 ] || set -- bash scripts/test.sh

pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop EXIT
for _ in $(seq 1 "$spinners"); do
  timeout "${LOAD_LIMIT:-3600}" sh -c 'while :; do :; done' &
  pids+=($!)
done

say() { printf '[load] %s\n' "$*" >&2; }
say "$spinners CPU-bound processes beside: $* (load average $(cut -d' ' -f1-3 /proc/loadavg))"
start=$SECONDS
rc=0
"$@" || rc=$?
say "exit $rc after $((SECONDS - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit "$rc"
