/* Computation to overlap with communication (--overlap; docs/measurement.md,
 * "Overlap with computation"), and the one busy wait of the harness.
 *
 * A program calls mb_compute() between starting a nonblocking operation and
 * waiting for it (collectives' coll_one_call, halocompare's halo_compute);
 * it computes only while the timing loop runs an overlap measurement
 * (mb_kernel.compute_s > 0: measure.c sets the length around the kernel),
 * else returns at once (it counts every call).  The overlap share is OMB's
 * and IMB-NBC's: overlap = 100 max(0, min(1, (t_pure + t_cpu - t_ovrl) /
 * t_pure)) % (mb_overlap_pct) — OMB's print_stats_nbc (c/util/osu_util_mpi.c:
 * MAX(0, 100 - (overall - compute) / pure * 100), unclamped above) and the
 * Intel MPI Benchmarks User Guide, IMB-NBC, "Measuring Communication and
 * Computation Overlap" (against the *_pure benchmarks). */
#include "internal.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* A dependent chain of multiply-adds: cannot be vectorised or skipped, and
 * (noinline, seeded by the previous result) cannot be hoisted out of a loop. */
__attribute__((noinline)) double mb_work(long n, double seed)
{
    double x = 1.0 + seed * 1e-30;
    for (long i = 0; i < n; i++) x = x * 0.999999 + 1e-6;
    return x;
}

double mb_work_rate(MPI_Comm world)
{
    /* the fastest of 30 tries of at least 0.2 ms: short enough that most fit between the time slices of a
     * busy machine, so the best is the undisturbed rate (a descheduled try only looks slower) */
    double best = 0;
    long n = 1000;
    for (int got = 0; got < 30;) {
        double t0 = MPI_Wtime();
        volatile double x = mb_work(n, (double)n);
        (void)x;
        double t = MPI_Wtime() - t0;
        if (t > 2e-4 || n > (1l << 40)) {
            best = fmax(best, (double)n / t);
            got++;
        } else {
            n *= 2;
        }
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, world); /* rank 0's: every rank does the same work */
    return best;
}

#ifndef MB_SIMULATED
static double rate; /* mb_work iterations per second (mb_compute_init) */
#endif
static double active; /* seconds mb_compute does now (measure.c: mb_compute_set) */
static long calls;    /* mb_compute calls so far */

void mb_compute_init(MPI_Comm world)
{
#ifdef MB_SIMULATED /* a computation is a simulated sleep (mb_compute_for): no work to calibrate, and no time it would take */
    (void)world;
#else
    rate = mb_work_rate(world);
#endif
}

/* A simulated sleep: simulated time moves in MPI calls and sleeps only. */
#ifdef MB_SIMULATED
static void sleep_for(double seconds)
{
    if (seconds > 0) {
        struct timespec ts = {(time_t)seconds, (long)((seconds - floor(seconds)) * 1e9)};
        nanosleep(&ts, NULL);
    }
}
#endif

double mb_busy(double seconds)
{
    double t0 = MPI_Wtime();
#ifdef MB_SIMULATED
    sleep_for(seconds);
#else
    while (MPI_Wtime() - t0 < seconds) {
    }
#endif
    return MPI_Wtime() - t0;
}

#ifndef MB_SIMULATED
/* Nothing after it starts before everything before it is done: without that a core runs the code on either
 * side of a computation in parallel with its chain of multiply-adds (a 170 ns chain and 55 ns of independent
 * code after it took 184 ns together), time t_ovrl hides and t_pure + t_cpu do not.  The computation used to
 * be bracketed by two clock reads instead (~25 ns each), and a process with nothing to communicate "hid"
 * 5-10 % of its exchange (bench/README.md, "The harness's own overlap"). */
static inline void fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("lfence" ::: "memory");
#elif defined(__aarch64__)
    __asm__ volatile("isb" ::: "memory");
#endif
}
#endif

void mb_compute_for(double seconds)
{
#ifdef MB_SIMULATED
    sleep_for(seconds);
#else
    static double sink; /* the work's result, kept so it is not optimised away */
    if (!(rate > 0)) { /* not calibrated (mb_compute_init): a wait on the clock */
        mb_busy(seconds);
        return;
    }
    fence();
    sink += mb_work(lround(seconds * rate), sink);
    fence();
#endif
}

void mb_compute(void)
{
    calls++;
    if (active > 0) mb_compute_for(active);
}

void mb_compute_set(double seconds) { active = seconds; }

long mb_compute_calls(void) { return calls; }

double mb_overlap_pct(double t_pure, double t_cpu, double t_ovrl)
{
    if (!(t_pure > 0)) return 0;
    return 100 * fmax(0, fmin(1, (t_pure + t_cpu - t_ovrl) / t_pure));
}

void mb_overlap_row(const struct mb_row *plain, struct mb_row *ov)
{
    mb_row_init(ov, plain->test, plain->method);
    memcpy(ov->comm, plain->comm, sizeof ov->comm);
    memcpy(ov->params, plain->params, sizeof ov->params);
    memcpy(ov->order, plain->order, sizeof ov->order);
    ov->neighbors = plain->neighbors;
    ov->periodic = plain->periodic;
    ov->threads = plain->threads;
    ov->bytes = plain->bytes;
    ov->sent_bytes = plain->sent_bytes;
}

double mb_overlap_compute_s(const struct mb_run *run, const struct mb_row *plain)
{
    return run->opts.overlap * (plain->t.median > 0 ? plain->t.median : 1e-9);
}
