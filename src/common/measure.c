/* The timing loop: verify, warm up, calibrate K, then repetitions of K
 * iterations, each started by a barrier or at an agreed instant on
 * synchronised clocks (--sync window: the start strategies, start.h), each
 * yielding what its variant measures (struct yield: its time, a paired
 * reference, the overlap triple), until the median is known well enough.  Every decision is taken from values all ranks share (after
 * an allreduce), so all ranks always take the same branch.
 *
 * One loop for one test (mb_measure) and for a group of tests measured
 * interleaved (mb_measure_group): in each round every member of the group
 * does one repetition, in a seeded shuffled order, so the members' samples
 * of one round share the machine's state of that moment and a comparison
 * can pair them (docs/measurement.md, "Paired comparisons"; the rounds
 * file, rounds.c).  A single test is the group of one. */
#include "internal.h"
#include "start.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's iters iterations with its mb_compute() hook computing `compute` seconds each (overlap.c). */
static double run_with(const struct mb_kernel *k, long iters, double compute)
{
    double t;
    mb_compute_set(compute);
    if (k->run_timed) {
        t = k->run_timed(k->state, iters);
    } else {
        t = MPI_Wtime();
        k->run(k->state, iters);
        t = MPI_Wtime() - t;
    }
    mb_compute_set(0);
    return t;
}

/* The kernel as measured: an overlap measurement (compute_s > 0) with its computation. */
static double run_once(const struct mb_kernel *k, long iters) { return run_with(k, iters, k->compute_s); }

/* --overlap's t_cpu: the computation alone, iters times. */
static double compute_alone(double seconds, long iters)
{
    double t = MPI_Wtime();
    for (long i = 0; i < iters; i++) mb_compute_for(seconds);
    return MPI_Wtime() - t;
}

/* A timed repetition: run_once, then, where a delay fault names the test
 * (MPIMB_FAULT=delay:FRACTION/..., fault.c), a spin of FRACTION x the run's
 * own time inside the timed time, so the repetition is really that much longer;
 * and a drift fault's extra seconds (drift:SECONDS/..., 0: none), spun likewise. */
static double run_rep(const struct mb_kernel *k, long iters, double delay, double extra)
{
    double t = run_once(k, iters);
    mb_phases_take(k, iters, t);
    if (delay > 0) t += mb_busy(delay * t);
    return extra > 0 ? t + mb_busy(extra) : t;
}

/* Two verified iterations; returns 0 or 1 (identical on all ranks).  A rank
 * says its first failure; the ranks agree once, after both (each agreement
 * costs a 1024-rank simulation as much as the exchange).  A rank the fault
 * injection (MPIMB_FAULT) names fills its send data for another iteration:
 * stale data, as a protocol bug would deliver, which the program's own check
 * must then find on the receiving side. */
static int verify(struct mb_run *run, const struct mb_kernel *k, struct mb_row *row)
{
    long stale = mb_fault_here(run, row) ? 7919 : 0;
    int bad = 0, any;
    for (long it = 0; it < 2; it++) {
        char msg[300] = "";
        k->fill(k->state, it + stale);
        MPI_Barrier(k->comm); /* every rank has checked the last iteration's data before new data comes */
        run_once(k, 1);
        /* every rank checks every iteration: a check may communicate (rma's has a barrier) */
        if (!k->check(k->state, it, msg, sizeof msg) || bad) continue;
        bad = 1;
        char desc[200];
        mb_row_desc(run, row, desc, sizeof desc);
        fprintf(stderr, "%s: verification failed in %s: rank %d: %s\n", run->prog->name, desc, run->rank, msg);
    }
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, k->comm);
    return any;
}

/* Iterations per repetition so that one lasts at least the minimum time;
 * rep[0] gets the time of one repetition at the K returned (slowest rank),
 * rep[1] its wall time (more than rep[0] where the kernel times itself and
 * leaves something out, as collectives' barrier between calls).
 * Each step keeps the best of three tries, so one hiccup (a descheduled
 * rank) cannot pin K at a value far too small for the whole test; one try
 * in simulation, where no rank is ever descheduled (and each try of a
 * 1024-rank collective costs seconds of real time).  K0 > 0
 * (the previous size of a sweep) is where the search starts; a start that
 * proves far too long is brought down once, in proportion. */
#ifdef MB_SIMULATED
enum { CALIBRATE_TRIES = 1 };
#else
enum { CALIBRATE_TRIES = 3 };
#endif
static long calibrate(const struct mb_kernel *k, double min_rep, long K0, double *rep)
{
    long K = K0 > 0 ? K0 : 1;
    int may_shrink = K0 > 1;
    for (;;) {
        double tmax = 0;
        for (int try = 0; try < CALIBRATE_TRIES; try++) {
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

/* {minimum, sum, sum}: the three figures of rank_stats in one reduction */
static void min_sum_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i + 2 < 3 * *len; i += 3) {
        b[i] = fmin(a[i], b[i]);
        b[i + 1] += a[i + 1];
        b[i + 2] += a[i + 2];
    }
}

/* Over ranks, each rank's own median (idle ranks left out): the minimum
 * and the mean, the load imbalance behind the slowest rank's time. */
static void rank_stats(const struct mb_kernel *k, double *mine, long n, struct mb_stats *s)
{
    struct mb_stats own;
    mb_stats_compute(mine, (int)n, &own); /* sorts mine: the raw output was written before */
    /* {minimum of medians, sum of medians, ranks} */
    double in[3] = {k->idle ? INFINITY : own.median, k->idle ? 0 : own.median, k->idle ? 0 : 1}, out[3];
    MPI_Datatype three;
    MPI_Op op;
    MPI_Type_contiguous(3, MPI_DOUBLE, &three);
    MPI_Type_commit(&three);
    MPI_Op_create(min_sum_sum, 1, &op);
    MPI_Allreduce(in, out, 1, three, op, k->comm);
    MPI_Op_free(&op);
    MPI_Type_free(&three);
    s->rank_min = isfinite(out[0]) ? out[0] : -1;
    s->rank_mean = out[2] > 0 ? out[1] / out[2] : -1;
}

/* Sizes a sweep has from this one to the end of -m (this one included). */
static int sizes_left(const struct mb_opts *o, long long bytes)
{
    if (bytes < 0 || (size_t)bytes < o->size_min || (size_t)bytes > o->size_max) return 1;
    int n = 0;
    for (size_t s = (size_t)bytes; s <= o->size_max && n < 64; s = mb_next_size(s)) n++;
    return n;
}

/* The kinds of sample a repetition can yield, in the order of their blocks in a batch's reduction. */
enum kind { TIME, REF, PURE, CPU, KINDS };

struct member;
/* What one repetition of a member measures: the variants of the one loop.  Its time first (started by the
 * start strategy, start.h), then, each after a barrier so that they share the machine's moment, the
 * samples the variant pairs with it; the kept rounds hold every kind, the slowest rank's and this rank's. */
struct yield {
    unsigned kinds; /* 1 << kind for each kind it yields */
    int runs;       /* timed runs per repetition: what a round costs */
    /* the samples after the time, per iteration, into s[kind]; extra: a drift fault's seconds (0: none) */
    void (*more)(const struct mb_kernel *k, long K, double extra, double *s);
    double (*time)(const double *s); /* the repetition's time from its samples */
    /* what the row gets besides its time's statistics (median: theirs), before rank_stats sorts mine */
    void (*row)(struct mb_run *run, const struct member *m, long n, double median);
};

/* One test being measured: mb_measure has one, mb_measure_group several
 * (interleaved: each round runs every member once).  The kept samples are
 * the rounds every member kept, in round order (all but sorted). */
struct member {
    const struct mb_kernel *k;
    struct mb_row *row;
    const struct yield *y;
    long K;
    int failed;            /* verification */
    double delay;          /* a delay fault's fraction (MPIMB_FAULT, tests), else 0 */
    double drift;          /* a drift fault's seconds per step (MPIMB_FAULT, tests), else 0 */
    double rep[2];         /* one repetition's time and wall time at K (slowest rank) */
    double budget;         /* this test's own budget (the group's is the sum) */
    double busy;           /* this rank's seconds in this member (progress line) */
    double *all, *sorted, *mine;       /* the repetition's time: the slowest rank's, sorted; this rank's */
    double *slow[KINDS], *own[KINDS]; /* each kind of sample it yields: the slowest rank's; this rank's */
    int *pos;                          /* the member's position in each kept round's order */
};

/* ---- the plain variant: the kernel's time */
static double time_of(const double *s) { return s[TIME]; }

static void plain_row(struct mb_run *run, const struct member *m, long n, double median)
{
    (void)median;
    mb_raw_write(run, m->k, m->row, 0, m->mine, n);
}

static const struct yield plain = {1u << TIME, 1, NULL, time_of, plain_row};

/* ---- paired (mb_kernel.ref_timed, collectives --timing subtract): the kernel's time less its reference's,
 * at least 0 (a negative one is the reference's noise); order statistics commute with that clamp, so the
 * median's interval is the difference's.  The reference shares the repetition's drift. */
static void paired_more(const struct mb_kernel *k, long K, double extra, double *s)
{
    MPI_Barrier(k->comm);
    double r = k->ref_timed(k->state, K);
    s[REF] = (extra > 0 ? r + mb_busy(extra) : r) / (double)K;
}

static double paired_time(const double *s) { return fmax(0, s[TIME] - s[REF]); }

/* the reference's median; the loop's and the reference's own times, as measured (docs/results-format.md) */
static void paired_row(struct mb_run *run, const struct member *m, long n, double median)
{
    (void)median;
    if (m->k->ref_median) {
        struct mb_stats rs;
        mb_stats_compute(m->slow[REF], (int)n, &rs);
        *m->k->ref_median = rs.median;
    }
    mb_raw_write(run, m->k, m->row, 0, m->own[TIME], n);
    mb_raw_write(run, m->k, m->row, 1, m->own[REF], n);
}

static const struct yield paired = {1u << TIME | 1u << REF, 2, paired_more, paired_time, paired_row};

/* ---- overlap (mb_kernel.compute_s): t_ovrl, then the operation alone (t_pure) and the computation alone
 * (t_cpu), the same moment's */
static void overlap_more(const struct mb_kernel *k, long K, double extra, double *s)
{
    (void)extra;
    MPI_Barrier(k->comm);
    s[PURE] = run_with(k, K, 0) / (double)K;
    MPI_Barrier(k->comm);
    s[CPU] = compute_alone(k->compute_s, K) / (double)K;
}

/* the row's time is t_ovrl; t_pure, t_cpu, the share (overlap.c) and the time hidden go to params */
static void overlap_row(struct mb_run *run, const struct member *m, long n, double median)
{
    struct mb_row *row = m->row;
    mb_raw_write(run, m->k, row, 0, m->mine, n);
    struct mb_stats ps, cs, hs;
    /* the time hidden, paired per repetition (t_pure + t_cpu - t_ovrl of the same moment), its median's 95 %
     * interval the judgement (docs/measurement.md): before the stats below sort pure and cpu */
    double *hid = malloc((size_t)(n > 0 ? n : 1) * sizeof *hid);
    for (long i = 0; i < n; i++) hid[i] = m->slow[PURE][i] + m->slow[CPU][i] - m->all[i];
    mb_stats_compute(hid, (int)n, &hs);
    free(hid);
    mb_stats_compute(m->slow[PURE], (int)n, &ps);
    mb_stats_compute(m->slow[CPU], (int)n, &cs);
    mb_param(row, "overlap", "%g", run->opts.overlap);
    mb_param(row, "pure_s", "%.9g", ps.median);
    mb_param(row, "cpu_s", "%.9g", cs.median);
    mb_param(row, "overlap_pct", "%.9g", mb_overlap_pct(ps.median, cs.median, median));
    mb_param(row, "hidden_s", "%.9g", hs.median);
    if (isfinite(hs.ci_lo)) { /* from MB_CI_MIN_REPS repetitions */
        mb_param(row, "hidden_ci_lo_s", "%.9g", hs.ci_lo);
        mb_param(row, "hidden_ci_hi_s", "%.9g", hs.ci_hi);
    }
    row->overlap = 1;
}

static const struct yield overlap = {1u << TIME | 1u << PURE | 1u << CPU, 3, overlap_more, time_of, overlap_row};

/* A kernel's variant (a reference and an overlap measurement are not both asked for). */
static const struct yield *yield_of(const struct mb_kernel *k)
{
    return k->ref_timed ? &paired : k->compute_s > 0 ? &overlap : &plain;
}

/* Verification, warm-up, the sweep's share, calibration: each member on its own. */
/* The run fails; the first failed row is named in its closing line. */
static void record_failure(struct mb_run *run, const struct mb_row *row)
{
    if (!run->nfailed++) mb_row_desc(run, row, run->first_failed, sizeof run->first_failed);
}

static int prepare(struct mb_run *run, struct member *m, int grouped)
{
    const struct mb_opts *o = &run->opts;
    const struct mb_kernel *k = m->k;
    struct mb_row *row = m->row;
    double b0 = MPI_Wtime();
    if (grouped) { /* a member that hangs here (verification, warm-up) is named: --timeout per test */
        char desc[200];
        mb_row_desc(run, row, desc, sizeof desc);
        mb_watchdog_arm(o->timeout, desc);
    }
    m->y = yield_of(k);
    m->delay = mb_fault_delay(row);
    m->drift = mb_fault_drift(row);
    if (o->verify && k->fill && k->check) {
        m->failed = verify(run, k, row);
        if (m->failed) record_failure(run, row);
        row->verified = m->failed ? "no" : "yes";
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
    m->budget = sw && o->sweep_budget > 0 ? sw->budget / (sw->left > 0 ? sw->left : 1) : o->time_budget;
    /* --min-rep-time 0 (as --quick sets it) asks for one iteration per repetition */
    double min_rep = o->min_rep_time, tick100 = 100 * MPI_Wtick();
    int want_sync = o->sync == MB_SYNC_WINDOW || (o->sync == MB_SYNC_AUTO && (run->prog->flags & MB_WINDOW_BY_DEFAULT)), size;
    MPI_Comm_size(k->comm, &size);
    want_sync = want_sync && size == run->nprocs; /* the clocks are the world's: only tests every rank runs */
    want_sync = want_sync && m->y == &plain; /* a pair (or three) per repetition: barrier starts */
    m->K = min_rep > 0 ? calibrate(k, min_rep > tick100 ? min_rep : tick100, sw ? sw->K : 0, m->rep) : 1;
    m->busy = MPI_Wtime() - b0;
    return want_sync;
}

/* Room for `need` kept rounds in every member's arrays. */
static void grow(struct member *m, int n, long need, long *room)
{
    if (need <= *room) return;
    *room = 2 * need;
    for (int j = 0; j < n; j++) {
        size_t b = (size_t)*room * sizeof(double);
        m[j].all = realloc(m[j].all, b);
        m[j].sorted = realloc(m[j].sorted, b);
        m[j].mine = realloc(m[j].mine, b);
        m[j].pos = realloc(m[j].pos, (size_t)*room * sizeof(int));
        for (int c = 0; c < KINDS; c++) {
            if (!(m[j].y->kinds >> c & 1)) continue;
            m[j].slow[c] = realloc(m[j].slow[c], b);
            m[j].own[c] = realloc(m[j].own[c], b);
        }
    }
}

/* splitmix64: the seed of round r of group g (the same on every rank). */
static unsigned long long mix(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* What a measurement ends with, for the rows. */
struct outcome {
    long n, rejected; /* rounds kept; rounds rejected (some member started late) */
    double elapsed;   /* seconds since t0 (slowest rank) */
    int window;
};

/* One batch's samples as the loop reduces them: one array, so that a batch costs one allreduce.  A block
 * of n x batch for each kind some member yields (member j's round i at j * batch + i), then the seconds
 * elapsed and the start strategy's share. */
struct batch {
    long at[KINDS], ext, len, room; /* at[kind]: its block, -1 where no member yields it; ext: the elapsed time */
    double *loc, *got, *tmp;        /* this rank's; the maximum over ranks (the slowest rank's); merge scratch */
};

static void lay_out(struct batch *b, unsigned kinds, int n, long batch)
{
    b->ext = 0;
    for (int c = 0; c < KINDS; c++) {
        b->at[c] = kinds >> c & 1 ? b->ext : -1;
        if (kinds >> c & 1) b->ext += (long)n * batch;
    }
    b->len = b->ext + 1 + MB_START_SHARE(n);
    if (b->len <= b->room) return;
    b->room = 2 * b->len;
    b->loc = realloc(b->loc, (size_t)b->room * sizeof *b->loc);
    b->got = realloc(b->got, (size_t)b->room * sizeof *b->got);
    b->tmp = realloc(b->tmp, (size_t)b->room * sizeof *b->tmp);
}

/* The loop's state across batches. */
struct loop {
    const struct mb_opts *o;
    MPI_Comm comm;            /* the first member's: every member's has the same processes */
    struct mb_start *start;   /* how repetitions start */
    struct batch b;
    unsigned kinds;           /* the kinds any member yields */
    double budget, elapsed;   /* the group's budget (the members' sum); seconds since t0, slowest rank */
    long nk, batch, room, rejected, drawn; /* rounds kept; this batch's; arrays' room; rounds dropped; orders drawn */
    int *perm, *at, *late;    /* a round's order; each member's place in it; members some rank started late */
    double *busy;             /* each member's time per repetition, for the next batch's size */
    const char *stop;
};

static void loop_open(struct loop *L, struct mb_run *run, struct member *m, int n, int window)
{
    L->o = &run->opts;
    L->comm = m[0].k->comm;
    L->batch = L->o->reps;
    L->perm = malloc((size_t)n * sizeof *L->perm);
    L->at = malloc((size_t)n * sizeof *L->at);
    L->late = malloc((size_t)n * sizeof *L->late);
    L->busy = malloc((size_t)n * sizeof *L->busy);
    for (int j = 0; j < n; j++) {
        L->budget += m[j].budget;
        L->kinds |= m[j].y->kinds;
        L->busy[j] = m[j].rep[1]; /* one repetition's wall time: the windows' first length */
    }
    L->start = mb_start_open(run, L->comm, window, L->busy, n);
}

/* Member x's repetition in round i: started by the strategy, its time, then its variant's other samples. */
static void repetition(struct loop *L, struct member *x, int j, long i, double extra)
{
    const struct mb_kernel *k = x->k;
    double s[KINDS] = {0};
    L->start->ops->wait(L->start, k->comm, j);
    s[TIME] = L->start->ops->taken(L->start, j, run_rep(k, x->K, x->delay, extra) / (double)x->K);
    if (x->y->more) x->y->more(k, x->K, extra, s);
    for (int c = 0; c < KINDS; c++)
        if (x->y->kinds >> c & 1) L->b.loc[L->b.at[c] + j * L->batch + i] = s[c];
}

/* The batch's rounds: every member once per round, in a seeded shuffled order (the same on every rank). */
static void rounds(struct loop *L, struct member *m, int n, unsigned long long seed)
{
    for (long i = 0; i < L->batch; i++) {
        if (n > 1) {
            mb_permutation(mix(seed + (unsigned long long)L->drawn), L->perm, n);
        } else {
            L->perm[0] = 0;
        }
        L->drawn++;
        mb_start_round(L->start, i);
        for (int p = 0; p < n; p++) {
            struct member *x = &m[L->perm[p]];
            double b0 = MPI_Wtime();
            double extra = mb_fault_drift_step(x->drift); /* this repetition's and its reference's */
            L->at[L->perm[p]] = p;
            repetition(L, x, L->perm[p], i, extra);
            x->busy += MPI_Wtime() - b0;
        }
        for (int j = 0; j < n; j++) m[j].pos[L->nk + i] = L->at[j]; /* kept with the samples below */
    }
}

/* A repetition's time is the slowest rank's; reduced outside the timed region, once per batch.  A
 * repetition some rank started late is MB_LATE longer here, on every rank. */
static void reduce(struct loop *L, double t0)
{
    struct batch *b = &L->b;
    b->loc[b->ext] = MPI_Wtime() - t0;
    L->start->ops->share(L->start, b->loc + b->ext + 1);
    MPI_Allreduce(b->loc, b->got, (int)b->len, MPI_DOUBLE, MPI_MAX, L->comm);
    L->elapsed = b->got[b->ext];
    L->start->ops->shared(L->start, b->got + b->ext + 1);
}

/* Keeps the batch's rounds no member started late, as every member's kept round nk + v; returns v. */
static long keep(struct loop *L, struct member *m, int n)
{
    const struct batch *b = &L->b;
    long v = 0, nb = L->batch;
    for (int j = 0; j < n; j++) {
        L->late[j] = 0;
        mb_phases_batch(m[j].k); /* --phases: each repetition's phases, the slowest rank's (phases.c) */
    }
    for (long i = 0; i < nb; i++) {
        int late = 0;
        for (int j = 0; j < n; j++) {
            int lj = b->got[b->at[TIME] + j * nb + i] >= MB_LATE;
            L->late[j] |= lj;
            late |= lj;
        }
        if (late) continue;
        for (int j = 0; j < n; j++) {
            struct member *x = &m[j];
            const long r = L->nk + v;
            double g[KINDS] = {0}, l[KINDS] = {0};
            for (int c = 0; c < KINDS; c++) {
                if (!(x->y->kinds >> c & 1)) continue;
                x->slow[c][r] = g[c] = b->got[b->at[c] + j * nb + i];
                x->own[c][r] = l[c] = b->loc[b->at[c] + j * nb + i];
            }
            x->all[r] = x->y->time(g);
            x->mine[r] = x->y->time(l);
            x->pos[r] = x->pos[L->nk + i];
            mb_phases_keep(x->k, i);
        }
        v++;
    }
    L->rejected += nb - v;
    L->start->ops->adapt(L->start, L->o, L->late, nb, nb - v);
    return v;
}

/* The stopping rule on every member's interval, and the next batch: the interval narrows as 1/sqrt(n),
 * so what should reach the target, with a margin, but at most half again, and not past the budget or
 * the cap. */
static void judge(struct loop *L, struct member *m, int n, long v)
{
    const struct mb_opts *o = L->o;
    const long nk = L->nk, ci_floor = o->reps > MB_CI_MIN_REPS ? o->reps : MB_CI_MIN_REPS, cap = o->max_reps;
    double ratio = nk + v > 0 ? 0 : INFINITY;
    for (int j = 0; j < n; j++) {
        struct member *x = &m[j];
        memcpy(L->b.tmp, x->all + nk, (size_t)v * sizeof *L->b.tmp);
        merge(x->sorted, nk, L->b.tmp, v);
        if (nk + v > 0) ratio = fmax(ratio, ci_ratio(x->sorted, nk + v, o->rel_ci));
        L->busy[j] = nk + v > 0 ? x->sorted[(nk + v) / 2] * (double)x->K * x->y->runs : 0;
    }
    double per_round = L->start->ops->round_time(L->start, L->busy);
    L->nk = nk + v;
    L->stop = mb_stop_reason(o, L->nk, ratio, L->elapsed, L->budget);
    if (L->stop) return;
    long fit = (long)((L->budget - L->elapsed) / per_round) + 1, k = L->nk, batch;
    double want = ceil((double)k * (ratio * ratio - 1) * 1.2);
    batch = k < ci_floor ? ci_floor - k : k / 2 > 1 ? k / 2 : 1;
    if (k >= ci_floor && want < batch) batch = want > 2 ? (long)want : 2;
    if (k >= o->reps && batch > fit) batch = fit;
    if (batch > cap - k) batch = cap - k;
    L->batch = batch;
}

static void loop_close(struct loop *L)
{
    mb_start_close(L->start);
    free(L->b.loc);
    free(L->b.got);
    free(L->b.tmp);
    free(L->perm);
    free(L->at);
    free(L->late);
    free(L->busy);
}

/* The one timing loop: batches of rounds; in each round every member does
 * one repetition of its K iterations, in a seeded shuffled order (n > 1),
 * started as its start strategy starts it (start.h: a barrier over its
 * communicator, or its agreed instant on a window).  The samples are
 * reduced once per batch over the first member's communicator; a round in
 * which some member started late is dropped for every member, so the
 * members' samples stay paired by round.  Stops when every member's
 * interval meets the rule (mb_stop_reason), at --max-reps rounds, or when
 * the group's budget (the sum of the members') is spent. */
static void repeat(struct mb_run *run, struct member *m, int n, double t0, int window, unsigned long long seed,
                   struct outcome *out)
{
    struct loop L = {0};
    loop_open(&L, run, m, n, window);
    while (!L.stop) {
        grow(m, n, L.nk + L.batch, &L.room);
        lay_out(&L.b, L.kinds, n, L.batch);
        rounds(&L, m, n, seed);
        reduce(&L, t0);
        judge(&L, m, n, keep(&L, m, n));
    }
    loop_close(&L);
    *out = (struct outcome){.n = L.nk, .rejected = L.rejected, .elapsed = L.elapsed, .window = window};
}

/* Fills a member's row from its samples (raw output first: rank_stats sorts mine). */
static void finish(struct mb_run *run, struct member *m, const struct outcome *r, double budget, double sync_error)
{
    const struct mb_kernel *k = m->k;
    struct mb_row *row = m->row;
    long n = r->n;
    struct mb_stats s;
    mb_stats_compute(m->sorted, (int)n, &s);
    m->y->row(run, m, n, s.median); /* the raw output first: rank_stats sorts mine */
    rank_stats(k, m->mine, n, &s);
    row->iters = m->K;
    row->reps = n;
    row->t = s;
    /* the member's own verdict: "ci" where its interval is within the target, else what ended the group */
    const char *stop = mb_stop_reason(&run->opts, n, n > 0 ? ci_ratio(m->sorted, n, run->opts.rel_ci) : INFINITY,
                                      r->elapsed, budget);
    snprintf(row->stop_reason, sizeof row->stop_reason, "%s", stop ? stop : "budget");
    if (r->window) {
        row->reps_rejected = r->rejected;
        row->sync_error = sync_error;
    }
    if (run->rank == 0) mb_sync_count(r->window, r->rejected);
    mb_phases_finish(k, row);
    mb_trace_test(run, k, row); /* --trace: a few more iterations under the profiler's trace */
    struct mb_sweep *sw = k->sweep;
    if (sw) { /* a member of a group is charged its budget's share of the group's time */
        sw->K = m->K;
        sw->budget -= budget > 0 ? r->elapsed * m->budget / budget : r->elapsed;
        sw->left--;
    }
}

static void release(struct member *m, int n)
{
    for (int j = 0; j < n; j++) {
        free(m[j].all);
        free(m[j].sorted);
        free(m[j].mine);
        for (int c = 0; c < KINDS; c++) {
            free(m[j].slow[c]);
            free(m[j].own[c]);
        }
        free(m[j].pos);
    }
    free(m);
}

/* One K for members of about the same speed.  A repetition has a fixed cost
 * (its start, an RMA epoch) that K iterations share, so two members of one
 * speed calibrated to different K differ by that share alone: measured, the
 * larger K was the faster in 108 of 144 such false calls (bench/README.md).
 * Members whose time per iteration is within 2x of the fastest of their
 * cluster run the cluster's largest K; members far apart keep their own, so
 * a slow method's repetitions do not grow 50-fold.  K and rep are the
 * slowest rank's (allreduced), so every rank forms the same clusters. */
static void share_k(struct member *m, int n)
{
    int *by = malloc((size_t)n * sizeof *by);
    double *t = malloc((size_t)n * sizeof *t); /* time per iteration */
    for (int j = 0; j < n; j++) {
        by[j] = j;
        t[j] = m[j].rep[0] / (double)m[j].K;
    }
    for (int a = 1; a < n; a++) /* fastest first; insertion sort, n is tens */
        for (int b = a; b > 0 && t[by[b]] < t[by[b - 1]]; b--) {
            int x = by[b];
            by[b] = by[b - 1];
            by[b - 1] = x;
        }
    for (int a = 0, b; a < n; a = b) {
        long K = m[by[a]].K;
        for (b = a + 1; b < n && t[by[b]] <= 2 * t[by[a]]; b++) K = m[by[b]].K > K ? m[by[b]].K : K;
        for (int c = a; c < b; c++) {
            struct member *x = &m[by[c]];
            x->rep[0] *= (double)K / (double)x->K;
            x->rep[1] *= (double)K / (double)x->K;
            x->K = K;
        }
    }
    free(t);
    free(by);
}

/* Prepares every member and runs the loop; returns the group's budget. */
static double measure(struct mb_run *run, struct member *m, int n, unsigned long long seed, struct outcome *r,
                      double *sync_error)
{
    const struct mb_opts *o = &run->opts;
    double t0 = MPI_Wtime(), budget = 0;
    /* A group starts its repetitions by barrier: on windows one member that
     * starts late spoils the round for all (its samples are paired), and with
     * tens of members nearly every round of a busy machine has one. */
    int want_sync = n == 1;
    for (int j = 0; j < n; j++) {
        want_sync &= prepare(run, &m[j], n > 1);
        budget += m[j].budget;
    }
    if (n > 1 && o->min_rep_time > 0) share_k(m, n);
    if (n > 1) { /* the rounds: --timeout per test, so n of them */
        char desc[200], what[260];
        mb_row_desc(run, m[0].row, desc, sizeof desc);
        snprintf(what, sizeof what, "%s and %d more measured with it", desc, n - 1);
        mb_watchdog_arm(o->timeout * n, what);
    }
    if (want_sync && !mb_sync_ready()) mb_sync_start(run); /* the first test that needs the clocks */
    int window = want_sync;
    for (int j = 0; j < n; j++) {
        if (want_sync && o->min_rep_time <= 0) probe(m[j].k, m[j].rep);
        window = window && mb_sync_window(run, m[j].rep[0]);
    }
    for (int j = 0; j < n; j++) mb_param(m[j].row, "sync", "%s", window ? "window" : "barrier");
    repeat(run, m, n, t0, window, seed, r);
    *sync_error = window ? mb_sync_check(run) : -1;
    return budget;
}

int mb_measure(struct mb_run *run, const struct mb_kernel *k, struct mb_row *row)
{
    struct member *m = calloc(1, sizeof *m);
    m->k = k;
    m->row = row;
    struct outcome r;
    double sync_error, budget = measure(run, m, 1, 0, &r, &sync_error);
    finish(run, m, &r, budget, sync_error);
    int failed = m->failed;
    release(m, 1);
    return failed;
}

/* The seed of the rounds' orders: --order-seed (or --order shuffle's), else
 * rank 0's pick from the clock; the same on every rank (collective over
 * world, at the first group). */
static unsigned long long rounds_seed(struct mb_run *run)
{
    static long long seed = -1;
    if (seed >= 0) return (unsigned long long)seed;
    seed = run->opts.order_seed;
    if (seed < 0 && run->rank == 0) seed = (long long)(mix((unsigned long long)(MPI_Wtime() * 1e9) ^ (unsigned long long)getpid()) & 0xffffffffull);
    MPI_Bcast(&seed, 1, MPI_LONG_LONG, 0, run->world);
    return (unsigned long long)seed;
}

int mb_measure_group(struct mb_run *run, const struct mb_kernel *k, struct mb_row *rows, int n)
{
    if (n < 1) return 0;
    static long groups; /* groups measured so far in this run: the next one's number */
    const long g = groups++;
    unsigned long long seed = mix(rounds_seed(run) * 0x2545f4914f6cdd1dull + (unsigned long long)g);
    struct member *m = calloc((size_t)n, sizeof *m);
    for (int j = 0; j < n; j++) {
        m[j].k = &k[j];
        m[j].row = &rows[j];
    }
    struct outcome r;
    double sync_error, budget = measure(run, m, n, seed, &r, &sync_error), done = MPI_Wtime();
    if (run->rank == 0) mb_rounds_begin(run, rounds_seed(run)); /* the JSON names the file before any row of it */
    int failed = 0;
    for (int j = 0; j < n; j++) {
        finish(run, &m[j], &r, budget, sync_error);
        failed += m[j].failed;
        /* the row's wall (mb_end): its own time, and its share of the group's since */
        rows[j].t_begin = MPI_Wtime() - m[j].busy - (MPI_Wtime() - done) / n;
    }
    if (run->rank == 0) { /* written once its rows are: a killed run never has samples of rows the CSV lacks */
        const double **t = malloc((size_t)n * sizeof *t);
        const int **pos = malloc((size_t)n * sizeof *pos);
        for (int j = 0; j < n; j++) {
            t[j] = m[j].all;
            pos[j] = m[j].pos;
        }
        mb_rounds_keep(g, n, rows, t, pos, r.n);
        free(t);
        free(pos);
    }
    release(m, n);
    return failed;
}
