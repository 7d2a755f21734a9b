/* The overlap test's engine, shared by the methods of overlap.c and the
 * placement study of place.c: one rank's side of a nonblocking exchange with
 * a computation beside it. */
#ifndef OVERLAP_H
#define OVERLAP_H

#include "threads.h"

#include <stdatomic.h>

/* Methods, in the order overlap.c runs them; M_SERIAL is the placement
 * study's baseline (exchange, then computation, one thread). */
enum { M_COMM, M_COMPUTE, M_PLAIN, M_THREAD_TEST, M_THREAD_WAIT, NMETH, M_SERIAL = NMETH };
_Static_assert((int)NMETH == (int)OV_NMETH, "threads.h's count of overlap's methods");

struct ov {
    struct mb_team *team;
    MPI_Comm comm;
    int method, role, partner, me; /* role -1: takes no part */
    size_t bytes;
    unsigned char *sbuf, *rbuf;
    MPI_Request req[2];
    MPI_Status st[2][2]; /* per thread (MPI_STATUSES_IGNORE upsets gcc's bounds checks) */
    long work;           /* iterations of the computation */
    double sink;         /* keeps the computation alive (thread 0 only) */
    atomic_long go, done; /* thread 0 -> comm thread: start iteration; back: finished */
};

/* The mb_kernel callbacks over a struct ov. */
double thr_ov_timed(void *state, long iters);
void thr_ov_fill(void *state, long it);
int thr_ov_check(void *state, long it, char *msg, size_t len);

/* The placement study (place.c): serial, comm-thread and spmd for every
 * placement of --placement, with o's message size and computation. */
void thr_placement(struct thr *c, const struct ov *o);

#endif
