/* The timing loop's paired reference (collectives --timing subtract): each
 * repetition's sample is kernel minus reference, so the median and its 95 %
 * interval are those of the difference.  Synthetic self-timed kernels with
 * a large shared disturbance per repetition: the difference is exact, while
 * shifting the kernel's own bounds by the reference's median (the old
 * subtraction) gives an interval as wide as the disturbance. */
#include "check.h"
#include "internal.h"
#include "solo.h"

#include <math.h>
#include <string.h>

#define D 2e-6 /* the true difference, seconds */

struct synth {
    long calls;
    double noise[2]; /* this repetition's disturbance: kernel's and reference's */
};

static double disturbance(long i) { return 1e-4 * (double)((i * 7919) % 13); }

static double kernel(void *state, long iters)
{
    struct synth *s = state;
    double x = disturbance(s->calls++);
    s->noise[0] = x;
    return (D + x) * (double)iters;
}

static double reference(void *state, long iters)
{
    struct synth *s = state;
    return s->noise[0] * (double)iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct mb_run run;
    solo_run(&run);
    run.opts = (struct mb_opts){.reps = 10, .max_reps = 40, .rel_ci = 0.01, .time_budget = 100, .sync = MB_SYNC_BARRIER};
    struct synth st = {0};
    double ref_med = -1;
    struct mb_kernel k = {.state = &st, .comm = MPI_COMM_WORLD, .run_timed = kernel, .ref_timed = reference,
                          .ref_median = &ref_med};
    struct mb_row row;
    mb_row_init(&row, "bcast", "library");
    CHECK(mb_measure(&run, &k, &row) == 0);
    /* an exact difference: the interval is tight at once, at --reps */
    CHECK(row.reps == 10 && !strcmp(row.stop_reason, "ci"));
    CHECK(fabs(row.t.median - D) < 1e-12);
    CHECK(fabs(row.t.ci_lo - D) < 1e-12 && fabs(row.t.ci_hi - D) < 1e-12); /* the interval of the difference */
    CHECK(st.calls == 10);
    /* the reference's median: of the 10 disturbances */
    double x[10];
    for (int i = 0; i < 10; i++) x[i] = disturbance(i);
    struct mb_stats r;
    mb_stats_compute(x, 10, &r);
    CHECK(fabs(ref_med - r.median) < 1e-12);
    /* the old way: the kernel's bounds shifted by the reference's median are as wide as the disturbance */
    for (int i = 0; i < 10; i++) x[i] = D + disturbance(i);
    struct mb_stats w;
    mb_stats_compute(x, 10, &w);
    CHECK(w.ci_hi - w.ci_lo > 100 * D);
    CHECK(strstr(row.params, "sync=barrier") != NULL);
    MPI_Finalize();
    return CHECK_DONE();
}
