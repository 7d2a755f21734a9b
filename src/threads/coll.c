/* coll-mt: T threads each run a collective on their own duplicate of world
 * at the same time (concurrent), versus thread 0 running the same T
 * collectives one after the other (sequential).  One iteration = T
 * collectives done.  Allreduce sums int64 (exact, so --verify checks the
 * sums); bcast is from rank 0. */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, BCAST };

struct coll {
    struct mb_team *team;
    int op, concurrent, T, rank, nprocs;
    int count; /* int64 elements */
    MPI_Comm *comm;
    int64_t **sbuf, **rbuf;
};

static void one(struct coll *c, int t)
{
    if (c->op == ALLREDUCE)
        MPI_Allreduce(c->sbuf[t], c->rbuf[t], c->count, MPI_INT64_T, MPI_SUM, c->comm[t]);
    else
        MPI_Bcast(c->rbuf[t], c->count, MPI_INT64_T, 0, c->comm[t]);
}

static double coll_thread(void *arg, int t, long iters)
{
    struct coll *c = arg;
    double t0 = mb_team_now();
    for (long i = 0; i < iters; i++) {
        if (c->concurrent)
            one(c, t);
        else
            for (int k = 0; k < c->T; k++) one(c, k);
    }
    return mb_team_now() - t0;
}

static double coll_timed(void *state, long iters)
{
    struct coll *c = state;
    return mb_team_run(c->team, c->concurrent ? c->T : 1, coll_thread, c, iters);
}

static int64_t value(int rank, int t, long it, int j) { return (int64_t)(rank + 1) * 1000003 + t * 131 + it * 17 + j; }

static void coll_fill(void *state, long it)
{
    struct coll *c = state;
    for (int t = 0; t < c->T; t++)
        for (int j = 0; j < c->count; j++) {
            c->sbuf[t][j] = value(c->rank, t, it, j);
            c->rbuf[t][j] = c->op == BCAST && c->rank == 0 ? c->sbuf[t][j] : -1;
        }
}

static int coll_check(void *state, long it, char *msg, size_t len)
{
    struct coll *c = state;
    int64_t n = c->nprocs;
    for (int t = 0; t < c->T; t++)
        for (int j = 0; j < c->count; j++) {
            int64_t want = c->op == BCAST ? value(0, t, it, j)
                                          : n * (n + 1) / 2 * 1000003 + n * ((int64_t)t * 131 + it * 17 + j);
            if (c->rbuf[t][j] != want) {
                snprintf(msg, len, "communicator %d: element %d is %lld, expected %lld", t, j,
                         (long long)c->rbuf[t][j], (long long)want);
                return 1;
            }
        }
    return 0;
}

void thr_coll(struct thr *th)
{
    static const char *const names[COLL_NMETH] = {"allreduce-concurrent", "allreduce-sequential", "bcast-concurrent",
                                         "bcast-sequential"};
    struct mb_run *run = th->run;
    struct coll c = {.team = th->team, .T = th->T, .rank = run->rank, .nprocs = run->nprocs,
                     .comm = th->percomm};
    c.count = th->short_size >= 8 ? (int)(th->short_size / 8) : 1;
    c.sbuf = calloc((size_t)c.T, sizeof *c.sbuf);
    c.rbuf = calloc((size_t)c.T, sizeof *c.rbuf);
    for (int t = 0; t < c.T; t++) {
        c.sbuf[t] = mb_alloc((size_t)c.count * 8);
        c.rbuf[t] = mb_alloc((size_t)c.count * 8);
    }
    for (int m = 0; m < COLL_NMETH; m++) {
        c.op = m / 2;
        c.concurrent = m % 2 == 0;
        struct mb_row row;
        mb_row_init(&row, "coll-mt", names[m]);
        snprintf(row.comm, sizeof row.comm, "per-thread");
        row.bytes = (long long)c.count * 8;
        row.threads = c.T;
        mb_param_opt(run, &row, "bind");
        mb_begin(run, &row);
        char why[160];
        if (c.concurrent && c.T > 1 && thr_level_short(th, MPI_THREAD_MULTIPLE, why, sizeof why)) {
            mb_na(run, &row, "%s", why);
        } else {
            struct mb_kernel k = {.state = &c, .comm = run->world, .run_timed = coll_timed, .fill = coll_fill,
                                  .check = coll_check};
            thr_measure(th, th->team, &k, &row);
        }
        mb_end(run, &row);
    }
    for (int t = 0; t < c.T; t++) {
        free(c.sbuf[t]);
        free(c.rbuf[t]);
    }
    free(c.sbuf);
    free(c.rbuf);
}
