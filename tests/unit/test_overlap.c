/* overlap.c: the overlap share (OMB's and IMB-NBC's definition, clamped to
 * [0, 100] %) and the hook, which computes only inside an overlap
 * measurement and counts every call (no timing is checked here).  The
 * timing loop's three paired times are tested end to end on the exact simulated platform
 * (tests/test_overlap.py). */
#include "check.h"
#include "internal.h"

#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(mb_overlap_pct(10, 20, 20) == 100); /* t_ovrl = t_cpu: all of the operation hidden */
    CHECK(mb_overlap_pct(10, 20, 30) == 0);   /* t_ovrl = t_pure + t_cpu: nothing hidden */
    CHECK(mb_overlap_pct(10, 20, 25) == 50);
    CHECK(mb_overlap_pct(10, 20, 40) == 0);  /* slower than both in turn: 0, not negative */
    CHECK(mb_overlap_pct(10, 20, 15) == 100); /* faster than the computation alone (noise): at most 100 */
    CHECK(mb_overlap_pct(0, 20, 15) == 0);    /* no operation time: no share */
    long c = mb_compute_calls();
    mb_compute(); /* outside a measurement: counted (halocompare finds its nonblocking methods so) */
    mb_compute_init(MPI_COMM_WORLD);
    mb_compute_set(1e-4);
    mb_compute(); /* inside: the calibrated work */
    mb_compute_set(0);
    CHECK(mb_compute_calls() == c + 2);
    CHECK(mb_work_rate(MPI_COMM_WORLD) > 0 && mb_work(1000, 0) > 0);

    /* the overlap row: the ordinary row's names, none of its measurement; its computation from its median */
    struct mb_row plain, ov;
    mb_row_init(&plain, "halo", "irecv-isend");
    snprintf(plain.comm, sizeof plain.comm, "dup");
    mb_param(&plain, "timing", "osu");
    plain.order[1] = 3;
    plain.neighbors = 4, plain.periodic = 1, plain.threads = 2, plain.bytes = 64, plain.sent_bytes = 256;
    plain.reps = 7, plain.t.median = 2e-6, plain.overlap = 0;
    mb_overlap_row(&plain, &ov);
    CHECK(!strcmp(ov.test, "halo") && !strcmp(ov.method, "irecv-isend") && !strcmp(ov.comm, "dup"));
    CHECK(!strcmp(ov.params, "timing=osu") && ov.order[1] == 3 && ov.neighbors == 4 && ov.periodic == 1);
    CHECK(ov.threads == 2 && ov.bytes == 64 && ov.sent_bytes == 256 && ov.reps == 0 && ov.t.median == 0);
    struct mb_run run = {.opts = {.overlap = 3}};
    CHECK(mb_overlap_compute_s(&run, &plain) == 3 * 2e-6);
    CHECK(mb_overlap_compute_s(&run, &ov) == 3 * 1e-9); /* no median: 1 ns, never 0 (0 is no overlap at all) */
    MPI_Finalize();
    return CHECK_DONE();
}
