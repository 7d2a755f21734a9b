/* collectives: the timed regions.  One call of a test (struct coll_kern:
 * its blocking or nonblocking form, its forced algorithm under
 * --algorithms), the two ways to time it (--timing osu: each call alone;
 * subtract: collective + barrier against a barrier-only loop) and the
 * verification pair the harness calls around them. */
#include "coll.h"

int coll_one_call(struct coll_kern *k)
{
    struct coll_state *s = k->s;
    s->root = coll_next_root(s);
    s->calls++;
    if (!k->nb) return k->op->call(s, NULL);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = k->op->call(s, &r);
    if (rc != MPI_SUCCESS) return rc;
    mb_compute(); /* --overlap: the computation the operation may hide behind (overlap.c) */
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* --algorithms: the member's algorithm, written before its calls (a group
 * interleaves members; MPICH reads the variable at every call) and the
 * library's own choice back after them, so that the harness's collectives
 * (verification, statistics) never run a forced algorithm. */
void coll_force_alg(const struct coll_kern *k, int on)
{
    if (k->alg && !coll_algs_at_creation()) coll_algs_set(k->alg, on ? k->alg_value : k->alg->initial);
}

static int is_sync(const struct coll_kern *k) { return (k->op->flags & COLL_SYNC) != 0; }

/* OSU style: each call timed alone, a barrier (untimed) between calls. */
double coll_osu_timed(void *state, long iters)
{
    struct coll_kern *k = state;
    double t = 0;
    coll_force_alg(k, 1);
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        coll_one_call(k);
        t += MPI_Wtime() - t0;
        if (!is_sync(k)) MPI_Barrier(k->s->comm);
    }
    coll_force_alg(k, 0);
    return t;
}

/* Barrier subtraction: the timed loop is collective + barrier; a
 * barrier-only loop is measured beside it and its median subtracted. */
static void with_barrier_run(void *state, long iters)
{
    struct coll_kern *k = state;
    for (long i = 0; i < iters; i++) {
        coll_one_call(k);
        if (!is_sync(k)) MPI_Barrier(k->s->comm);
    }
}

static void barrier_run(void *state, long iters)
{
    struct coll_kern *k = state;
    for (long i = 0; i < iters; i++) MPI_Barrier(k->s->comm);
}

/* --timing subtract: the reference the harness pairs with each repetition */
static double barrier_timed(void *state, long iters)
{
    double t0 = MPI_Wtime();
    barrier_run(state, iters);
    return MPI_Wtime() - t0;
}

int coll_subtract(struct mb_kernel *kk, double *ref_median)
{
    const struct coll_kern *k = kk->state;
    kk->run = with_barrier_run;
    if (is_sync(k)) return 0; /* a barrier: nothing to subtract */
    kk->ref_timed = barrier_timed;
    kk->ref_median = ref_median;
    kk->ref_test = "barrier";
    return 1;
}

void coll_kern_fill(void *state, long it)
{
    struct coll_kern *k = state;
    k->op->fill(k->s, it);
}

int coll_kern_check(void *state, long it, char *msg, size_t len)
{
    struct coll_kern *k = state;
    return k->op->check(k->s, it, msg, len);
}

struct mb_kernel coll_kernel(struct coll_kern *k, MPI_Comm comm, struct mb_sweep *sw)
{
    struct mb_kernel kk = {.state = k, .comm = comm, .sweep = sw};
    if (k->op->fill && k->op->check) {
        kk.fill = coll_kern_fill;
        kk.check = coll_kern_check;
    }
    return kk;
}
