#!/usr/bin/env bash
# Re-runs the simulated 1024-rank halocompare tables of bench/simulated/README.md:
# the talk's methods and communicators on the BG/L-like torus and the
# Cray-XT-like torus, 2000 doubles per neighbour, then the comparison tables.
# About 10 minutes per platform on a small machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=(torus-bgl xt-torus)
for p in "${platforms[@]}"; do
    "$root/scripts/simulate" halocompare -n 1024 --platform "$p" -- \
        --methods irecv-send,irecv-isend,phased --comms world,evenodd,cart \
        --reps 3 --max-reps 3 --min-rep-time 0 --warmup 1 --verify \
        -o "$here/halocompare-$p-np1024.csv" >"$here/halocompare-$p-np1024.txt"
done
python3 "$here/compare.py" >"$here/tables.md"
