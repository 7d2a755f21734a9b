/* Fault injection for the suite's own tests: MPIMB_FAULT=TEST[/METHOD][@RANK]
 * makes the verification of every matching test fail for real.  The named
 * rank (every rank without @RANK) fills its send data for another iteration
 * (measure.c), so the program's own check finds stale data on the receiving
 * side, exactly as it would find a message from the wrong iteration.  One
 * mechanism for every program; a test with nothing to verify cannot match. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static struct {
    char test[32], method[48];
    int rank; /* -1: every rank */
    int on, matched;
} F;

const char *mb_fault_parse(const char *spec)
{
    static const char *const bad = "MPIMB_FAULT must be TEST[/METHOD][@RANK] (e.g. halo/irecv-isend@0)";
    F.on = 0;
    if (!spec || !*spec) return NULL;
    const char *at = strchr(spec, '@'), *slash = strchr(spec, '/');
    const char *end = at ? at : spec + strlen(spec);
    if (slash && slash > end) return bad;
    size_t tl = (size_t)((slash ? slash : end) - spec);
    if (tl == 0 || tl >= sizeof F.test) return bad;
    memcpy(F.test, spec, tl);
    F.test[tl] = 0;
    F.method[0] = 0;
    if (slash) {
        size_t ml = (size_t)(end - slash - 1);
        if (ml == 0 || ml >= sizeof F.method) return bad;
        memcpy(F.method, slash + 1, ml);
        F.method[ml] = 0;
    }
    F.rank = -1;
    if (at) {
        long long r;
        if (mb_parse_long(at + 1, 0, 1 << 30, &r)) return bad;
        F.rank = (int)r;
    }
    F.on = 1;
    return NULL;
}

int mb_fault_here(const struct mb_run *run, const struct mb_row *row)
{
    if (!F.on || strcmp(F.test, row->test) || (F.method[0] && strcmp(F.method, row->method))) return 0;
    F.matched = 1;
    return F.rank < 0 || F.rank == run->rank;
}

int mb_fault_matched(void) { return !F.on || F.matched; }
