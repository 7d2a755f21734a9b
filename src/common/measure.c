/* The timing loop: verify, warm up, calibrate K, then repetitions of K
 * iterations, each started by a barrier, until the median is known well
 * enough.  Every decision is taken from values all ranks share (after an
 * allreduce), so all ranks always take the same branch. */
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

/* Iterations per repetition so that one lasts at least the minimum time.
 * Each step keeps the best of three tries, so one hiccup (a descheduled
 * rank) cannot pin K at a value far too small for the whole test. */
static long calibrate(const struct mb_kernel *k, double min_rep)
{
    long K = 1;
    for (;;) {
        double tmax = 0;
        for (int try = 0; try < 3; try++) {
            MPI_Barrier(k->comm);
            double t = run_once(k, K), m;
            MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, k->comm);
            if (try == 0 || m < tmax) tmax = m;
        }
        if (tmax >= min_rep || K >= (1l << 30)) return K;
        double want = ceil(K * min_rep * 1.2 / (tmax > 1e-9 ? tmax : 1e-9));
        long next = want > 100.0 * K ? 100 * K : (long)want;
        K = next > 2 * K ? next : 2 * K;
    }
}

static int ci_ok(const struct mb_stats *s, double rel)
{
    return s->median > 0 && s->median - s->ci_lo <= rel * s->median && s->ci_hi - s->median <= rel * s->median;
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
    /* --min-rep-time 0 (as --quick sets it) asks for one iteration per repetition */
    double min_rep = o->min_rep_time, tick100 = 100 * MPI_Wtick();
    long K = min_rep > 0 ? calibrate(k, min_rep > tick100 ? min_rep : tick100) : 1;

    long cap = o->max_reps, n = 0, batch = o->reps, room = 0;
    double *loc = NULL, *all = NULL, *tmp = NULL, *mine = NULL; /* mine: this rank's own times */
    struct mb_stats s = {0};
    const char *stop = NULL;
    while (!stop) {
        if (n + batch + 1 > room) { /* grow with the samples, not to --max-reps up front */
            room = 2 * (n + batch + 1);
            loc = realloc(loc, (size_t)room * sizeof *loc);
            all = realloc(all, (size_t)room * sizeof *all);
            tmp = realloc(tmp, (size_t)room * sizeof *tmp);
            mine = realloc(mine, (size_t)room * sizeof *mine);
        }
        for (long i = 0; i < batch; i++) {
            MPI_Barrier(k->comm);
            loc[i] = run_once(k, K) / (double)K;
        }
        loc[batch] = MPI_Wtime() - t0;
        /* the repetition's time is the slowest rank's; reduced outside the timed region */
        MPI_Allreduce(loc, all + n, (int)batch + 1, MPI_DOUBLE, MPI_MAX, k->comm);
        double elapsed = all[n + batch];
        memcpy(mine + n, loc, (size_t)batch * sizeof *mine);
        n += batch;
        memcpy(tmp, all, (size_t)n * sizeof *tmp);
        mb_stats_compute(tmp, (int)n, &s);
        if (n >= o->reps && ci_ok(&s, o->rel_ci))
            stop = "ci";
        else if (n >= cap)
            stop = "max-reps";
        else if (elapsed >= o->time_budget)
            stop = "budget";
        else {
            /* grow by half again, but not past the budget or the cap */
            double per_rep = s.mean * (double)K + 1e-6;
            long fit = (long)((o->time_budget - elapsed) / per_rep) + 1;
            batch = n / 2 > 1 ? n / 2 : 1;
            if (batch > fit) batch = fit;
            if (batch > cap - n) batch = cap - n;
        }
    }
    mb_raw_write(run, k, row, mine, n);
    rank_stats(k, mine, n, &s);
    row->iters = K;
    row->reps = n;
    row->t = s;
    snprintf(row->stop_reason, sizeof row->stop_reason, "%s", stop);
    free(loc);
    free(all);
    free(tmp);
    free(mine);
    return failed;
}
