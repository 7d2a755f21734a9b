/* The timing loop: verify, warm up, calibrate K, then repetitions of K
 * iterations, each started by a barrier or at an agreed instant on
 * synchronised clocks (--sync window, sync.c), until the median is known
 * well enough.  Every decision is taken from values all ranks share (after
 * an allreduce), so all ranks always take the same branch. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double run_once(const struct mb_kernel *k, long iters)
{
    if (k->run_timed) return k->run_timed(k->state, iters);
    double t = MPI_Wtime();
    k->run(k->state, iters);
    return MPI_Wtime() - t;
}

/* One verified iteration per pass; returns 0 or 1 (identical on all ranks).
 * A rank the fault injection (MPIMB_FAULT) names fills its send data for
 * another iteration: stale data, as a protocol bug would deliver, which the
 * program's own check must then find on the receiving side. */
static int verify(struct mb_run *run, const struct mb_kernel *k, struct mb_row *row)
{
    long stale = mb_fault_here(run, row) ? 7919 : 0;
    for (long it = 0; it < 2; it++) {
        char msg[300] = "";
        k->fill(k->state, it + stale);
        MPI_Barrier(k->comm);
        run_once(k, 1);
        int bad = k->check(k->state, it, msg, sizeof msg) != 0, any;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, k->comm);
        if (bad) {
            char desc[200];
            mb_row_desc(run, row, desc, sizeof desc);
            fprintf(stderr, "%s: verification failed in %s: rank %d: %s\n", run->prog->name, desc, run->rank, msg);
        }
        if (any) return 1;
    }
    return 0;
}

/* Iterations per repetition so that one lasts at least the minimum time;
 * rep[0] gets the time of one repetition at the K returned (slowest rank),
 * rep[1] its wall time (more than rep[0] where the kernel times itself and
 * leaves something out, as collectives' barrier between calls).
 * Each step keeps the best of three tries, so one hiccup (a descheduled
 * rank) cannot pin K at a value far too small for the whole test.  K0 > 0
 * (the previous size of a sweep) is where the search starts; a start that
 * proves far too long is brought down once, in proportion. */
static long calibrate(const struct mb_kernel *k, double min_rep, long K0, double *rep)
{
    long K = K0 > 0 ? K0 : 1;
    int may_shrink = K0 > 1;
    for (;;) {
        double tmax = 0;
        for (int try = 0; try < 3; try++) {
            MPI_Barrier(k->comm);
            double w0 = MPI_Wtime(), t[2] = {run_once(k, K), MPI_Wtime() - w0}, m[2];
            MPI_Allreduce(t, m, 2, MPI_DOUBLE, MPI_MAX, k->comm);
            if (try == 0 || m[0] < tmax) {
                tmax = m[0];
                rep[1] = m[1];
            }
        }
        rep[0] = tmax;
        if (tmax >= min_rep && may_shrink && tmax > 3 * min_rep) {
            long want = (long)ceil(K * min_rep * 1.2 / tmax);
            may_shrink = 0;
            if (want < K) {
                K = want > 1 ? want : 1;
                continue;
            }
        }
        if (tmax >= min_rep || K >= (1l << 30)) return K;
        may_shrink = 0;
        double want = ceil(K * min_rep * 1.2 / (tmax > 1e-9 ? tmax : 1e-9));
        long next = want > 100.0 * K ? 100 * K : (long)want;
        K = next > 2 * K ? next : 2 * K;
    }
}

/* One repetition's time and wall time without calibration (--min-rep-time 0): one try. */
static void probe(const struct mb_kernel *k, double *rep)
{
    MPI_Barrier(k->comm);
    double w0 = MPI_Wtime(), t[2] = {run_once(k, 1), MPI_Wtime() - w0};
    MPI_Allreduce(t, rep, 2, MPI_DOUBLE, MPI_MAX, k->comm);
}

/* The stopping rule on the sorted samples, O(1): the larger half-width of
 * the median's 95 % interval over the target half-width (<= 1: reached). */
static double ci_ratio(const double *sorted, long n, double rel)
{
    if (n < 1) return INFINITY;
    int lo, hi;
    mb_median_ci_index((int)n, &lo, &hi);
    double med = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    return med > 0 ? fmax(med - sorted[lo], sorted[hi] - med) / (rel * med) : INFINITY;
}

const char *mb_stop_reason(const struct mb_opts *o, long n, double ratio, double elapsed, double budget)
{
    /* "ci" needs an interval that is one: at least MB_CI_MIN_REPS samples */
    if (n >= o->reps && n >= MB_CI_MIN_REPS && ratio <= 1) return "ci";
    if (n >= o->max_reps) return "max-reps";
    /* rejected repetitions may leave fewer than --reps, but only past the budget */
    if (elapsed >= budget && (n >= o->reps || (n > 0 && elapsed >= 4 * budget))) return "budget";
    return NULL;
}

#define LATE 1e9 /* seconds added to a repetition some rank started late (--sync window) */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Merges the m new samples (sorted here) into the n sorted ones: O(n + m log m)
 * per batch instead of sorting everything again. */
static void merge(double *sorted, long n, double *add, long m)
{
    qsort(add, (size_t)m, sizeof *add, cmp_double);
    long i = n - 1, j = m - 1, w = n + m - 1;
    while (j >= 0) sorted[w--] = i >= 0 && sorted[i] > add[j] ? sorted[i--] : add[j--];
}

/* Over ranks, each rank's own median (idle ranks left out): the minimum
 * and the mean, the load imbalance behind the slowest rank's time. */
static void rank_stats(const struct mb_kernel *k, double *mine, long n, struct mb_stats *s)
{
    struct mb_stats own;
    mb_stats_compute(mine, (int)n, &own); /* sorts mine: the raw output was written before */
    double lo, in_lo = k->idle ? INFINITY : own.median;
    double sum[2], in_sum[2] = {k->idle ? 0 : own.median, k->idle ? 0 : 1}; /* sum of medians, ranks */
    MPI_Allreduce(&in_lo, &lo, 1, MPI_DOUBLE, MPI_MIN, k->comm);
    MPI_Allreduce(in_sum, sum, 2, MPI_DOUBLE, MPI_SUM, k->comm);
    s->rank_min = isfinite(lo) ? lo : -1;
    s->rank_mean = sum[1] > 0 ? sum[0] / sum[1] : -1;
}

/* Sizes a sweep has from this one to the end of -m (this one included). */
static int sizes_left(const struct mb_opts *o, long long bytes)
{
    if (bytes < 0 || (size_t)bytes < o->size_min || (size_t)bytes > o->size_max) return 1;
    int n = 0;
    for (size_t s = (size_t)bytes; s <= o->size_max && n < 64; s = mb_next_size(s)) n++;
    return n;
}

/* The time between window starts, from one repetition's wall time (slowest
 * rank): room for a slower repetition, the clock error and the wait. */
static double window_length(double wall) { return 1.25 * wall + 4 * mb_sync_error() + 20e-6; }

int mb_measure(struct mb_run *run, const struct mb_kernel *k, struct mb_row *row)
{
    const struct mb_opts *o = &run->opts;
    double t0 = MPI_Wtime();
    int failed = 0;
    if (o->verify && k->fill && k->check) {
        failed = verify(run, k, row);
        if (failed) mb_record_failure(run, row);
        row->verified = failed ? "no" : "yes";
    }
    if (o->warmup > 0) {
        MPI_Barrier(k->comm);
        run_once(k, o->warmup);
    }
    struct mb_sweep *sw = k->sweep;
    if (sw) { /* a size the test skips (reductions: multiples of 8) is not waited for */
        int left = sizes_left(o, row->bytes);
        if (!sw->started || left < sw->left) sw->left = left;
        if (!sw->started) sw->budget = o->sweep_budget;
        sw->started = 1;
    }
    /* a sweep's budget: what is left, shared by the sizes left */
    double budget = sw && o->sweep_budget > 0 ? sw->budget / (sw->left > 0 ? sw->left : 1) : o->time_budget;
    /* --min-rep-time 0 (as --quick sets it) asks for one iteration per repetition */
    double min_rep = o->min_rep_time, tick100 = 100 * MPI_Wtick(), rep[2] = {0, 0}; /* time, wall time */
    int want_sync = o->sync == MB_SYNC_WINDOW || (o->sync == MB_SYNC_AUTO && (run->prog->flags & MB_WINDOW_BY_DEFAULT)), size;
    MPI_Comm_size(k->comm, &size);
    want_sync = want_sync && size == run->nprocs; /* the clocks are the world's: only tests every rank runs */
    want_sync = want_sync && !k->ref_timed;       /* a pair per repetition: barrier starts */
    long K = min_rep > 0 ? calibrate(k, min_rep > tick100 ? min_rep : tick100, sw ? sw->K : 0, rep) : 1;
    if (want_sync && !mb_sync_ready()) mb_sync_start(run); /* the first test that needs the clocks */
    if (want_sync && min_rep <= 0) probe(k, rep);
    const int window = want_sync && mb_sync_window(run, rep[0]);
    mb_param(row, "sync", "%s", window ? "window" : "barrier");
    double w = 0, start = 0; /* window length; the next batch's first start (global clock) */
    if (window) {
        mb_sync_refresh(run);
        w = o->window_us > 0 ? o->window_us * 1e-6 : window_length(rep[1]);
        double now = mb_sync_now();
        MPI_Allreduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, k->comm);
        start += 2 * w + 50e-6; /* every rank has left the allreduce by then */
    }

    const long ci_floor = o->reps > MB_CI_MIN_REPS ? o->reps : MB_CI_MIN_REPS;
    long cap = o->max_reps, n = 0, batch = o->reps, room = 0, rejected = 0;
    double *loc = NULL, *got = NULL, *all = NULL, *sorted = NULL, *mine = NULL; /* mine: this rank's own times */
    double *refs = NULL; /* the reference's samples (paired), for its median */
    const long pair = k->ref_timed ? 1 : 0; /* loc[batch + 3 + i]: repetition i's reference time */
    const char *stop = NULL;
    double elapsed = 0;
    while (!stop) {
        if (n + (1 + pair) * batch + 3 > room) { /* grow with the samples, not to --max-reps up front */
            room = 2 * (n + (1 + pair) * batch + 3);
            if (pair) refs = realloc(refs, (size_t)room * sizeof *refs);
            loc = realloc(loc, (size_t)room * sizeof *loc);
            got = realloc(got, (size_t)room * sizeof *got);
            all = realloc(all, (size_t)room * sizeof *all);
            sorted = realloc(sorted, (size_t)room * sizeof *sorted);
            mine = realloc(mine, (size_t)room * sizeof *mine);
        }
        double slowest = 0; /* wall time of this rank's longest repetition */
        for (long i = 0; i < batch; i++) {
            if (window) { /* start at the agreed instant; arriving after it spoils the repetition */
                double target = mb_sync_local(start + (double)i * w);
                int late = mb_sync_clock() > target;
                mb_sync_wait(target);
                double t = run_once(k, K) / (double)K, wall = mb_sync_clock() - target;
                loc[i] = late ? t + LATE : t;
                if (wall > slowest) slowest = wall;
            } else {
                MPI_Barrier(k->comm);
                loc[i] = run_once(k, K) / (double)K;
                if (pair) {
                    MPI_Barrier(k->comm);
                    loc[batch + 3 + i] = k->ref_timed(k->state, K) / (double)K;
                }
            }
        }
        loc[batch] = MPI_Wtime() - t0;
        loc[batch + 1] = window ? mb_sync_now() : 0;
        loc[batch + 2] = slowest;
        /* the repetition's time is the slowest rank's; reduced outside the timed region.
         * A repetition some rank started late is LATE longer here, on every rank. */
        MPI_Allreduce(loc, got, (int)((1 + pair) * batch) + 3, MPI_DOUBLE, MPI_MAX, k->comm);
        elapsed = got[batch];
        start = got[batch + 1] + 2 * w + 50e-6;
        slowest = got[batch + 2];
        long v = 0;
        for (long i = 0; i < batch; i++) {
            if (got[i] >= LATE) continue;
            /* paired: the difference, at least 0 (a negative one is the reference's noise); order
             * statistics commute with that clamp, so the median's interval is the difference's */
            all[n + v] = pair ? fmax(0, got[i] - got[batch + 3 + i]) : got[i];
            mine[n + v] = pair ? fmax(0, loc[i] - loc[batch + 3 + i]) : loc[i];
            if (pair) refs[n + v] = got[batch + 3 + i];
            v++;
        }
        rejected += batch - v;
        if (window && batch - v > batch / 4 && !(o->window_us > 0)) /* too tight: as long as the slowest, and more */
            w = fmax(1.5 * w, window_length(slowest));
        memcpy(loc, all + n, (size_t)v * sizeof *loc);
        merge(sorted, n, loc, v);
        n += v;
        double ratio = ci_ratio(sorted, n, o->rel_ci);
        stop = mb_stop_reason(o, n, ratio, elapsed, budget);
        if (!stop) {
            /* the interval narrows as 1/sqrt(n): what should reach the target, with a
             * margin, but at most half again, and not past the budget or the cap */
            double per_rep = window ? w : sorted[n / 2] * (double)K * (1 + pair) + 1e-6;
            long fit = (long)((budget - elapsed) / per_rep) + 1;
            double want = ceil((double)n * (ratio * ratio - 1) * 1.2);
            batch = n < ci_floor ? ci_floor - n : n / 2 > 1 ? n / 2 : 1;
            if (n >= ci_floor && want < batch) batch = want > 2 ? (long)want : 2;
            if (n >= o->reps && batch > fit) batch = fit;
            if (batch > cap - n) batch = cap - n;
        }
    }
    struct mb_stats s;
    mb_stats_compute(sorted, (int)n, &s);
    if (pair && k->ref_median) {
        struct mb_stats r;
        mb_stats_compute(refs, (int)n, &r);
        *k->ref_median = r.median;
    }
    mb_raw_write(run, k, row, mine, n);
    rank_stats(k, mine, n, &s);
    row->iters = K;
    row->reps = n;
    row->t = s;
    snprintf(row->stop_reason, sizeof row->stop_reason, "%s", stop);
    if (window) {
        row->reps_rejected = rejected;
        row->sync_error = mb_sync_check(run);
    }
    if (run->rank == 0) mb_sync_count(window, rejected);
    if (sw) {
        sw->K = K;
        sw->budget -= elapsed;
        sw->left--;
    }
    free(loc);
    free(got);
    free(all);
    free(sorted);
    free(mine);
    free(refs);
    return failed;
}
