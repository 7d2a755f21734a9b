/* The answer first: the sentences that open pingpong's stdout report —
 * the latency at the smallest size and the peak bandwidth, per placement
 * (intra-node, inter-node), and intra against inter where both were
 * measured (findings.c's CI rule). */
#include "pingpong.h"

#include <string.h>

struct sel {
    const char *test, *comm;
    long long bytes; /* -1: any */
};

static int keep(const struct mb_row *r, const void *arg)
{
    const struct sel *s = arg;
    return !strcmp(r->test, s->test) && !strcmp(r->comm, s->comm) && (s->bytes < 0 || r->bytes == s->bytes);
}

static long long smallest(const struct mb_run *run, const char *test)
{
    long long b = -1;
    for (int i = 0; i < run->nrows; i++)
        if (!strcmp(run->rows[i].test, test) && !run->rows[i].na && (b < 0 || run->rows[i].bytes < b))
            b = run->rows[i].bytes;
    return b;
}

void pp_findings(const struct mb_run *run)
{
    int n = 0;
    static const char *const where[] = {"intra", "inter"};
    const struct mb_row *lat[2] = {NULL, NULL};
    long long b0 = smallest(run, "latency");
    for (int w = 0; w < 2; w++) {
        struct sel s = {"latency", where[w], b0};
        struct mb_est e;
        if ((lat[w] = mb_extreme(run, keep, &s, mb_est_time, 1)) && !mb_est_time(lat[w], &e))
            mb_finding(stdout, &n, "Latency %s-node at %lld B: %.3g us (95 %% CI %.3g to %.3g).", where[w], b0,
                       e.v * 1e6, e.lo * 1e6, e.hi * 1e6);
        struct sel bw = {"bw", where[w], -1};
        const struct mb_row *peak = mb_extreme(run, keep, &bw, mb_est_rate, 1);
        if (peak && !mb_est_rate(peak, &e)) {
            char v[32], lo[32], hi[32];
            mb_fmt_value(v, sizeof v, e.v);
            mb_fmt_value(lo, sizeof lo, e.lo);
            mb_fmt_value(hi, sizeof hi, e.hi);
            mb_finding(stdout, &n, "Peak bandwidth %s-node: %s MB/s at %lld B (95 %% CI %s to %s).", where[w], v,
                       peak->bytes, lo, hi);
        }
    }
    struct mb_est a, b;
    if (lat[0] && lat[1] && !mb_est_time(lat[0], &a) && !mb_est_time(lat[1], &b)) {
        struct mb_vs v;
        mb_versus(&a, &b, &v);
        mb_finding(stdout, &n, "Inter-node latency is %.2fx the intra-node one at %lld B%s.", b.v / a.v, b0,
                   mb_vs_note(&v));
    }
}
