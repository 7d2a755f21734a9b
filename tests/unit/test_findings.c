/* Findings: a difference is called only where the 95 % CIs do not overlap. */
#include "check.h"
#include "mb.h"

#include <math.h>
#include <string.h>

static struct mb_row row(const char *method, double med, double lo, double hi, double sent)
{
    struct mb_row r;
    mb_row_init(&r, "halo", method);
    r.t.median = med;
    r.t.ci_lo = lo;
    r.t.ci_hi = hi;
    r.sent_bytes = sent;
    return r;
}

static int is_halo(const struct mb_row *r, const void *arg)
{
    (void)arg;
    return !strcmp(r->test, "halo");
}

int main(void)
{
    struct mb_est a, b;
    struct mb_vs v;
    struct mb_row fast = row("fast", 1e-3, 0.9e-3, 1.1e-3, 8e6), slow = row("slow", 2e-3, 1.8e-3, 2.2e-3, 8e6);
    CHECK(mb_est_time(&fast, &a) == 0 && mb_est_time(&slow, &b) == 0);
    mb_versus(&a, &b, &v);
    CHECK(v.a_better && fabs(v.ratio - 2) < 1e-12 && v.significant);
    CHECK(!strcmp(mb_vs_note(&v), ""));

    /* rates: 8 MB in 1 ms is 8000 MB/s, the CI inverts */
    CHECK(mb_est_rate(&fast, &a) == 0 && fabs(a.v - 8000) < 1e-9 && a.lo < a.v && a.v < a.hi && a.higher_better);
    CHECK(mb_est_rate(&slow, &b) == 0);
    mb_versus(&b, &a, &v);
    CHECK(!v.a_better && fabs(v.ratio - 2) < 1e-9 && v.significant);

    /* overlapping intervals: within the noise, whatever the medians */
    struct mb_row near = row("near", 1.05e-3, 0.95e-3, 1.2e-3, 8e6);
    mb_est_time(&fast, &a);
    mb_est_time(&near, &b);
    mb_versus(&a, &b, &v);
    CHECK(v.a_better && !v.significant && strstr(mb_vs_note(&v), "within the noise"));

    /* rows that give no estimate: n/a, FAILED, no bytes for a rate */
    struct mb_row na = fast, failed = fast, nobytes = fast;
    na.na = 1;
    failed.verified = "no";
    nobytes.sent_bytes = 0;
    CHECK(mb_est_time(&na, &a) && mb_est_time(&failed, &a) && mb_est_rate(&nobytes, &a));
    CHECK(mb_est_time(&nobytes, &a) == 0);

    /* extremes over a run's rows, the FAILED one left out */
    struct mb_row rows[] = {slow, fast, near, failed};
    rows[3].t.median = 1e-9; /* would be the fastest if it counted */
    struct mb_run run = {.rows = rows, .nrows = 4};
    CHECK(mb_extreme(&run, is_halo, NULL, mb_est_time, 1) == &rows[1]);
    CHECK(mb_extreme(&run, is_halo, NULL, mb_est_time, 0) == &rows[0]);
    CHECK(mb_extreme(&run, is_halo, NULL, mb_est_rate, 1) == &rows[1]);
    CHECK(mb_extreme(&run, is_halo, NULL, mb_est_rate, 0) == &rows[0]);
    return CHECK_DONE();
}
