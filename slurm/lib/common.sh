# Shared by slurm/sweep, slurm/collect, scripts/launches, scripts/coll-tune-check
# and scripts/run-main (sourced, not run; each sets MPIMB_ME, its name in messages).
# shellcheck shell=bash

# The programs a sweep may run (the suite's five).
# shellcheck disable=SC2034 # used by the scripts that source this file
MPIMB_PROGRAMS=(halocompare pingpong collectives rma threads)

# Where the programs, results and mpimb-report are: in the checkout, the
# repository root, ROOT/results and ROOT/.venv; in a copy make install wrote,
# what it recorded in lib/installed.sh (PREFIX/bin, ./results).  The scripts
# that source this file set root first.  MPIMB_REPORT_EXE, not MPIMB_REPORT:
# that one is the user's (the programs' findings step reads it, none to skip
# it), and a sweep's jobs inherit the environment, so it must reach them as set.
# shellcheck disable=SC2034,SC2154 # used by the scripts that source this file; root is theirs
MPIMB_BINDIR=$root MPIMB_RESULTS=$root/results MPIMB_REPORT_EXE=$root/.venv/bin/mpimb-report MPIMB_SLURM=slurm
if [[ -f "$(dirname "${BASH_SOURCE[0]}")/installed.sh" ]]; then
    # shellcheck source=/dev/null
    . "$(dirname "${BASH_SOURCE[0]}")/installed.sh"
fi

# One clear line on stderr, exit 2 (usage error).
die() {
    printf '%s: %s\n' "$MPIMB_ME" "$*" >&2
    exit 2
}

# A decimal integer in [lo, hi], judged by its digits before any arithmetic:
# bash's wraps silently past 2^63 (--rounds 99999999999999999999).
in_range() { # value lo hi
    [[ $1 =~ ^[0-9]+$ ]] || return 1
    local v=${1#"${1%%[!0]*}"}
    v=${v:-0}
    [[ ${#v} -le ${#3} ]] && ((10#$v >= $2 && 10#$v <= $3))
}

# A label, program or configuration name: letters, digits, '.', '_', '-'.
is_name() {
    [[ "$1" =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]
}

check_label() { # value [what, default --label]
    local l=$1 what=${2:---label}
    [[ -n "$l" ]] || die "$what must not be empty"
    if [[ "$l" == */* || "$l" =~ [[:space:]] ]] || ! is_name "$l"; then
        die "$what may hold only letters, digits, '.', '_' and '-' (no '/' or spaces), got '$l'"
    fi
}

# The default label: the short host name, reduced to the characters a label allows.
default_label() {
    local h
    h=$(hostname 2>/dev/null || echo unknown)
    h=${h%%.*}
    printf '%s' "${h//[^A-Za-z0-9._-]/_}"
}

# A configuration's name: PROGRAM-N<nodes>-ppn<ranks per node>[-t<threads>].
config_name() { # program nodes ppn [threads]
    printf '%s-N%s-ppn%s%s' "$1" "$2" "$3" "${4:+-t$4}"
}

jstr() { # a JSON string: \\, " and control characters escaped
    local s=$1 c i r=''
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    if [[ $s =~ [[:cntrl:]] ]]; then
        for ((i = 0; i < ${#s}; i++)); do
            c=${s:i:1}
            if [[ $c =~ [[:cntrl:]] ]]; then printf -v c '\\u%04x' "'$c"; fi
            r+=$c
        done
        s=$r
    fi
    printf '"%s"' "$s"
}

# Prints a word for a bash script: as is when it is plain, else quoted.
shq() {
    if [[ "$1" =~ ^[A-Za-z0-9_./:=,+%@-]+$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}

# Where the configuration's complete results are: prints the job directory
# holding a PROGRAM-*.json with "complete": true for CONFIG, or a series of
# launches (sweep --launches N) that finished, if there is one.
complete_dir() { # sweepdir config program
    local d
    for d in "$1"/*/; do
        d=${d%/}
        [[ -f "$d/job.json" ]] || continue
        grep -q "\"config\": \"$2\"" "$d/job.json" || continue
        if grep -qs '"complete": true' "$d/$3"-*.json || grep -qs '^  "status": "complete",$' "$d/launches/launches.json"; then
            printf '%s\n' "$d"
            return 0
        fi
    done
    return 1
}
