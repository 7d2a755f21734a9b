#!/usr/bin/env bash
# The whole halocompare table on a simulated machine — what
#   scripts/simulate halocompare -n 1024 --platform torus-bgl -- --quick --verify
# prints — cut into independent pieces (one per communicator and boundary,
# plus the one-sender tests) run JOBS at a time, then rendered as one table
# by mpimb-report.  A SimGrid simulation runs on one core, so separate
# processes are the only way to use a machine's other cores; simulated time
# is deterministic, so the pieces give the single command's figures
# exactly when both measure test by test (`-- --group none`; checked at 4
# and 16 ranks; tests/test_simulate.py).  By default a piece's groups hold
# one communicator's methods (as --group comm), the single command's every
# communicator's, and the simulated network state differs by a few 10^-5.
# The random ordering costs most (minutes per test at 1024 ranks), so its
# pieces start first.
#
# usage: full-table.sh [-j JOBS] [-n NP] [-p PLATFORM] [OUTDIR] [-- halocompare options]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

jobs=$(nproc)
np=1024
platform=torus-bgl
out=
extra=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -j | -n | -p)
        [[ $# -ge 2 ]] || { echo "full-table.sh: $1 needs a value" >&2; exit 2; }
        case $1 in -j) jobs=$2 ;; -n) np=$2 ;; -p) platform=$2 ;; esac
        shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "full-table.sh: unknown option '$1'" >&2; exit 2 ;;
    *) out=$1; shift ;;
    esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "full-table.sh: -j needs a positive integer, got '$jobs'" >&2; exit 2; }
# -n and -p are checked by scripts/simulate itself (a dry run), before any piece starts
check=$("$root/scripts/simulate" halocompare -n "$np" --platform "$platform" --dry-run 2>&1) ||
    { echo "full-table.sh: ${check#simulate: }" >&2; exit 2; }
out=${out:-$root/results/full-table-$platform-np$np}
mkdir -p "$out"

# piece = name and halocompare options; most expensive first
pieces=()
for comm in random evenodd world dup cart node; do
    for p in no yes; do pieces+=("$comm-$p|--tests halo --comms $comm --periodic $p"); done
done
pieces+=("one-sender|--tests one-sender")

run_piece() {
    local name=${1%%|*} opts
    read -r -a opts <<<"${1#*|}"
    "$root/scripts/simulate" halocompare -n "$np" --platform "$platform" --no-build -- \
        --quick --verify "${opts[@]}" "${extra[@]}" \
        -o "$out/halocompare-$platform-np$np-$name.csv" >"$out/$name.txt" 2>"$out/$name.log"
}

make -C "$root" --no-print-directory -s MPI=smpi build/smpi/bin/halocompare
start=$(date +%s)
status=0
for piece in "${pieces[@]}"; do
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || status=1; done
    run_piece "$piece" &
done
while [[ $(jobs -rp | wc -l) -gt 0 ]]; do wait -n || status=1; done
"$root/.venv/bin/mpimb-report" table "$out"/halocompare-*.csv >"$out/table.txt"
cat "$out/table.txt"
echo "full-table.sh: ${#pieces[@]} pieces, $jobs at a time, $(($(date +%s) - start)) s; files in $out" >&2
exit "$status"
