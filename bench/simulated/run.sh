#!/usr/bin/env bash
# Re-runs the simulated halocompare runs of bench/simulated/README.md on the
# calibrated machine models (platforms/bgl-*.xml, xt*-1024.xml): the talk's
# methods, orderings and stencils at the talk's sizes and message lengths,
# the evidence run (bgl-cop-64-cube) and the prediction (bgl-cop-1024), then
# compare.py's tables (tables.md).
#   run.sh [PLATFORM...]      default: all of them
# Simulated time is deterministic: one repetition per test, every exchange
# verified.  Real time on a shared 2-core machine: seconds for the BG/L
# models at 64/128 ranks, 1-2 minutes for each XT graph (1024 ranks) and
# 8 for bgl-cop-1024.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
all=(bgl-cop-64 bgl-cop-64-cube bgl-vn-128 xt3-1024 xt4-1024 xt4-sn-1024 bgl-cop-1024)
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=("${all[@]}")
for p in "${platforms[@]}"; do
    # the published runs: BG/L 64 / 128 processes of 2048 doubles, the XTs 1024 of 2000
    # (1024 ranks: 4 neighbours only; an XT graph took 1-2 minutes of real
    # time here for its 20 tests; one 8-neighbour test took 84 s to 4 minutes)
    case "$p" in
    bgl-cop-64 | bgl-cop-64-cube) np=64 count=2048 methods=irecv-send,irecv-isend periodic=both nbrs=4,8 ;;
    bgl-vn-128) np=128 count=2048 methods=irecv-send,irecv-isend periodic=both nbrs=4,8 ;;
    bgl-cop-1024) np=1024 count=2048 methods=irecv-send,irecv-isend periodic=no nbrs=4 ;;
    xt3-1024 | xt4-1024 | xt4-sn-1024) np=1024 count=2000 methods=irecv-send,irecv-isend,phased periodic=both nbrs=4 ;;
    *) echo "run.sh: unknown platform '$p' (have: ${all[*]})" >&2; exit 2 ;;
    esac
    MPIMB_REPORT=none "$root/scripts/simulate" halocompare -n "$np" --platform "$p" -- \
        --methods "$methods" --comms world,evenodd,cart --tests halo,one-sender --periodic "$periodic" --neighbors "$nbrs" \
        --count "$count" --reps 1 --max-reps 1 --min-rep-time 0 --verify \
        -o "$here/halocompare-$p-np$np.csv" >"$here/halocompare-$p-np$np.txt"
done
"$root/.venv/bin/python" "$here/compare.py" >"$here/tables.md"
