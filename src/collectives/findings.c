/* The answer first: the sentences that open the collectives report.  For
 * each collective measured in more than one way (the library call, the
 * user-level and two-level algorithms), at the largest size on world: the
 * fastest way against the library's call (findings.c's CI rule). */
#include "coll.h"

#include <stdio.h>
#include <string.h>

struct sel {
    const char *test, *root; /* root: the "root=..." pair, "" for unrooted */
    long long bytes;
};

/* The row's root pair ("root=rotate"), or "" without one. */
static void root_of(const struct mb_row *r, char *buf, size_t len)
{
    const char *p = strstr(r->params, "root=");
    size_t n = p ? strcspn(p, ";") : 0;
    snprintf(buf, len, "%.*s", (int)n, p ? p : "");
}

static int keep(const struct mb_row *r, const void *arg)
{
    const struct sel *s = arg;
    char root[64];
    root_of(r, root, sizeof root);
    return !strcmp(r->test, s->test) && !strcmp(r->comm, "world") && r->bytes == s->bytes && !strcmp(root, s->root);
}

void coll_findings(const struct mb_run *run)
{
    static const char *const tests[] = {"bcast", "reduce", "allreduce"};
    int n = 0;
    for (size_t t = 0; t < sizeof tests / sizeof *tests; t++) {
        long long bytes = -1;
        const struct mb_row *lib = NULL;
        for (int i = 0; i < run->nrows; i++) {
            const struct mb_row *r = &run->rows[i];
            if (!strcmp(r->test, tests[t]) && !strcmp(r->comm, "world") && !r->na && r->bytes > bytes) bytes = r->bytes;
        }
        for (int i = 0; i < run->nrows && !lib; i++) {
            const struct mb_row *r = &run->rows[i];
            if (!strcmp(r->test, tests[t]) && !strcmp(r->method, "library") && !strcmp(r->comm, "world") &&
                r->bytes == bytes)
                lib = r;
        }
        char root[64];
        if (!lib) continue;
        root_of(lib, root, sizeof root);
        struct sel s = {tests[t], root, bytes};
        const struct mb_row *best = mb_extreme(run, keep, &s, mb_est_time, 1);
        const struct mb_row *other = best != lib ? best : NULL;
        if (!other) { /* the library is fastest: against the best of the others */
            for (int i = 0; i < run->nrows; i++) {
                const struct mb_row *r = &run->rows[i];
                struct mb_est e, o;
                if (r != lib && keep(r, &s) && !mb_est_time(r, &e) && (!other || (!mb_est_time(other, &o) && e.v < o.v)))
                    other = r;
            }
        }
        struct mb_est a, b;
        if (!other || mb_est_time(lib, &a) || mb_est_time(other, &b)) continue;
        struct mb_vs v;
        mb_versus(&a, &b, &v);
        mb_finding(stdout, &n, "%s at %lld B on world%s%s: the library's call %.3g us against %s %.3g us: %s is %.2fx "
                   "faster%s.", tests[t], bytes, root[0] ? ", " : "", root, a.v * 1e6, other->method, b.v * 1e6,
                   v.a_better ? "the library" : other->method, v.ratio, mb_vs_note(&v));
    }
}
