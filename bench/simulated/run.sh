#!/usr/bin/env bash
# Re-runs the simulated halocompare tables of bench/simulated/README.md: the
# talk's methods and communicators on the BG/L-like tori (64 and 1024 ranks)
# and the Cray-XT-like torus (1024), 2000 doubles per neighbour, then the
# comparison tables (tables.md).  Usage: run.sh [PLATFORM...]
# About 10 minutes per platform on a small machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=(torus-bgl-64 torus-bgl xt-torus)
for p in "${platforms[@]}"; do
    np=1024
    [[ "$p" == torus-bgl-64 ]] && np=64
    "$root/scripts/simulate" halocompare -n "$np" --platform "$p" -- \
        --methods irecv-send,irecv-isend,phased --comms world,evenodd,cart \
        --reps 3 --max-reps 3 --min-rep-time 0 --warmup 1 --verify \
        -o "$here/halocompare-$p-np$np.csv" >"$here/halocompare-$p-np$np.txt"
done
"$root/.venv/bin/python" "$here/compare.py" >"$here/tables.md"
