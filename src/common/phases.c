/* A kernel's phases (mb_kernel.phases; halocompare --phases, docs/halo-phases.md): the seconds of each
 * phase of the same repetitions as the row's time, from the rank whose time is each repetition's sample
 * (the slowest), so that the phases add up to the sample; the medians and their 95 % intervals go into
 * the row's params.  The timing loop (measure.c) calls the four mb_phases_* hooks; the records live here,
 * one per kernel being measured, found by the kernel's address. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct record {
    const struct mb_kernel *k;
    long n, room;        /* repetitions of this batch taken so far; room in batch */
    int reduced;         /* the batch is reduced: the next repetition starts a new one */
    double *batch;       /* per repetition: [local time, phase 0 .. nphases-1 per iteration] */
    long kept, kroom;    /* repetitions kept so far; room in kept */
    double *keep;        /* per kept repetition: the slowest rank's phases */
};

static struct record *recs;
static int nrecs, roomrecs;

static struct record *record_of(const struct mb_kernel *k, int make)
{
    for (int i = 0; i < nrecs; i++)
        if (recs[i].k == k) return &recs[i];
    if (!make) return NULL;
    if (nrecs == roomrecs) {
        roomrecs = roomrecs ? 2 * roomrecs : 16;
        recs = realloc(recs, (size_t)roomrecs * sizeof *recs);
    }
    recs[nrecs] = (struct record){.k = k};
    return &recs[nrecs++];
}

#if !defined(__x86_64__) || defined(MB_SIMULATED)
uint64_t mb_ticks(void)
{
#ifdef MB_SIMULATED
    return (uint64_t)(MPI_Wtime() * 1e9); /* simulated time moves in MPI calls only */
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}
#endif

double mb_tick_seconds(void)
{
#if defined(__x86_64__) && !defined(MB_SIMULATED)
    static double tick;
    if (tick > 0) return tick;
    /* the invariant TSC against MPI_Wtime over 20 ms: a rate error of 1e-4 at most (two clock reads) */
    double w0 = MPI_Wtime(), w;
    uint64_t t0 = mb_ticks(), t;
    do {
        w = MPI_Wtime();
        t = mb_ticks();
    } while (w - w0 < 0.02);
    tick = (w - w0) / (double)(t - t0);
    return tick;
#else
    return 1e-9;
#endif
}

void mb_phases_take(const struct mb_kernel *k, long iters, double t)
{
    if (!k->phases) return;
    struct record *r = record_of(k, 1);
    const int w = 1 + k->nphases;
    if (r->reduced) r->n = r->reduced = 0;
    if (r->n == r->room) {
        r->room = r->room ? 2 * r->room : 64;
        r->batch = realloc(r->batch, (size_t)(r->room * w) * sizeof *r->batch);
    }
    double *x = r->batch + r->n++ * w;
    x[0] = t;
    k->phases(k->state, x + 1);
    for (int p = 1; p < w; p++) x[p] /= (double)(iters > 0 ? iters : 1);
}

/* The element of the larger local time (ties: the lexicographically larger phases, so that the operation
 * commutes); the element's width is in the datatype (contiguous doubles). */
static void slowest(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int w;
    MPI_Type_size(*type, &w);
    w /= (int)sizeof(double);
    double *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += w, b += w) {
        int c = 0;
        for (int p = 0; p < w && !c; p++) c = (a[p] > b[p]) - (a[p] < b[p]);
        if (c > 0) memcpy(b, a, (size_t)w * sizeof *a);
    }
}

void mb_phases_batch(const struct mb_kernel *k)
{
    if (!k->phases) return;
    struct record *r = record_of(k, 1);
    MPI_Datatype one;
    MPI_Op op;
    MPI_Type_contiguous(1 + k->nphases, MPI_DOUBLE, &one);
    MPI_Type_commit(&one);
    MPI_Op_create(slowest, 1, &op);
    /* every rank of comm took the same repetitions; in place: the slowest's phases replace each rank's */
    MPI_Allreduce(MPI_IN_PLACE, r->batch, (int)r->n, one, op, k->comm);
    MPI_Op_free(&op);
    MPI_Type_free(&one);
    r->reduced = 1;
}

void mb_phases_keep(const struct mb_kernel *k, long i)
{
    if (!k->phases) return;
    struct record *r = record_of(k, 1);
    const int w = 1 + k->nphases;
    if (r->kept == r->kroom) {
        r->kroom = r->kroom ? 2 * r->kroom : 64;
        r->keep = realloc(r->keep, (size_t)(r->kroom * k->nphases) * sizeof *r->keep);
    }
    memcpy(r->keep + r->kept++ * k->nphases, r->batch + i * w + 1, (size_t)k->nphases * sizeof *r->keep);
}

void mb_phases_finish(const struct mb_kernel *k, struct mb_row *row)
{
    struct record *r = k->phases ? record_of(k, 0) : NULL;
    if (!r) return;
    double *col = malloc((size_t)(r->kept > 0 ? r->kept : 1) * sizeof *col);
    for (int p = 0; p < k->nphases && r->kept > 0; p++) {
        char key[64];
        struct mb_stats s;
        for (long i = 0; i < r->kept; i++) col[i] = r->keep[i * k->nphases + p];
        mb_stats_compute(col, (int)r->kept, &s);
        snprintf(key, sizeof key, "phase_%s_s", k->phase_names[p]);
        mb_param(row, key, "%.6g", s.median);
        if (!isfinite(s.ci_lo)) continue; /* fewer than MB_CI_MIN_REPS repetitions: no interval */
        snprintf(key, sizeof key, "phase_%s_lo_s", k->phase_names[p]);
        mb_param(row, key, "%.6g", s.ci_lo);
        snprintf(key, sizeof key, "phase_%s_hi_s", k->phase_names[p]);
        mb_param(row, key, "%.6g", s.ci_hi);
    }
    free(col);
    free(r->batch);
    free(r->keep);
    *r = recs[--nrecs];
}
