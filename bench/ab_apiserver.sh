#!/usr/bin/env bash
# A/B of the local API server: BASE (a git ref, default main) against this tree, alternating,
# ROUNDS rounds (default 2) of bench/bench_apiserver.py and bench/registry_cpu.py each. Besides the
# rates, each round prints the server's CPU µs per create, update and watched write (`_cpu_us`),
# the figure to compare when other processes share the machine.
#   bash bench/ab_apiserver.sh [BASE] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
base_ref=${1:-main}
rounds=${2:-2}
py=.venv/bin/python
tmp=$(mktemp -d)
mkdir -p "$tmp/tree"
git archive "$base_ref" src | tar -x -C "$tmp"
ln -s "$tmp/src" "$tmp/tree/agones"
for round in $(seq 1 "$rounds"); do
  for side in base this; do
    tree=-
    [ "$side" = base ] && tree="$tmp/tree"
    dir=$(mktemp -d)
    $py bench/other_tree.py "$tree" -m agones localcluster apiserver --kubeconfig "$dir/kubeconfig" \
      > /dev/null 2> "$dir/err" &
    pid=$!
    for _ in $(seq 1 600); do [ -f "$dir/kubeconfig" ] && break; sleep 0.05; done
    echo "== $side round $round (base: $base_ref), load $(cut -d' ' -f1 /proc/loadavg)"
    $py bench/bench_apiserver.py --kubeconfig "$dir/kubeconfig" --server-pid "$pid" \
      | grep -E "_per_s|list_s|_cpu_us|_per_event"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    $py bench/other_tree.py "$tree" bench/registry_cpu.py 2> /dev/null
  done
done
