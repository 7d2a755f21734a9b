/* MPI-4 persistent collectives (MPI_Bcast_init, ...) beside the blocking
 * and nonblocking forms: the request is made once in the set-up, bound to
 * the test's buffers, and each call is MPI_Start + MPI_Wait.  MPICH 4 has
 * them as MPI_<Coll>_init; Open MPI 4.1 as MPIX_<Coll>_init in its pcollreq
 * extension (mpi-ext.h) where built; elsewhere the rows are n/a saying so.
 * The request binds its root, so --root rotate is n/a too.  Verification is
 * the library call's (the same buffers, the same fill and check). */
#include "coll.h"

#if defined(MB_SIMULATED)
#define PERSIST_NONE "SimGrid SMPI has no persistent collectives"
#elif MPI_VERSION >= 4
#define PINIT(coll) MPI_##coll##_init
#elif defined(OMPI_MAJOR_VERSION)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PINIT(coll) MPIX_##coll##_init
#else
#define PERSIST_NONE "this Open MPI was built without its pcollreq extension (MPIX_<coll>_init)"
#endif
#else
#define PERSIST_NONE "this MPI library has no persistent collectives (MPI-4)"
#endif

#define B MPI_BYTE
#define D MPI_DOUBLE
#define I(s) ((int)(s))

#if !defined(PERSIST_NONE)
static const char *start(struct coll_state *s, int rc)
{
    static char why[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS) return NULL;
    int len = 0;
    MPI_Error_string(rc, why, &len);
    s->preq = MPI_REQUEST_NULL;
    return why;
}
#endif

#if defined(PERSIST_NONE)
#define SETUP(name, expr)                                                                                          \
    static const char *name(struct coll_state *s)                                                                  \
    {                                                                                                              \
        (void)s;                                                                                                   \
        return PERSIST_NONE;                                                                                       \
    }
#else
#define SETUP(name, expr)                                                                                          \
    static const char *name(struct coll_state *s)                                                                  \
    {                                                                                                              \
        if (s->root_mode) return "a persistent request binds its root: --root rotate cannot be measured";         \
        s->root = s->fixed_root;                                                                                   \
        return start(s, expr);                                                                                     \
    }
#endif

SETUP(barrier_init, PINIT(Barrier)(s->comm, MPI_INFO_NULL, &s->preq))
SETUP(bcast_init, PINIT(Bcast)(s->sbuf, I(s->bytes), B, s->root, s->comm, MPI_INFO_NULL, &s->preq))
SETUP(reduce_init, PINIT(Reduce)(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->root, s->comm, MPI_INFO_NULL,
                                 &s->preq))
SETUP(allreduce_init, PINIT(Allreduce)(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm, MPI_INFO_NULL, &s->preq))
SETUP(allgather_init, PINIT(Allgather)(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm, MPI_INFO_NULL,
                                       &s->preq))
SETUP(alltoall_init, PINIT(Alltoall)(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm, MPI_INFO_NULL,
                                     &s->preq))

/* One call: start the request made in the set-up, wait for it. */
static int call(struct coll_state *s, MPI_Request *r)
{
    (void)r;
    int rc = MPI_Start(&s->preq);
    return rc == MPI_SUCCESS ? MPI_Wait(&s->preq, MPI_STATUS_IGNORE) : rc;
}

static void release(struct coll_state *s)
{
    if (s->preq != MPI_REQUEST_NULL) MPI_Request_free(&s->preq);
    s->preq = MPI_REQUEST_NULL;
}

/* The library table's entry of test, with this form's call, set-up and release. */
#define P(test, flags, smul, rmul, fill, check, agg, init)                                                          \
    {test, "persistent", flags, smul, rmul, call, fill, check, agg, init, release}
const struct coll_op coll_persistent[] = {
    P("barrier", COLL_SYNC | COLL_NOSIZE, MUL_0, MUL_0, NULL, NULL, AGG_NONE, barrier_init),
    P("bcast", COLL_ROOTED, MUL_1, MUL_0, coll_bcast_fill, coll_bcast_check, AGG_P1, bcast_init),
    P("reduce", COLL_ROOTED | COLL_DOUBLES, MUL_1, MUL_1, coll_reduce_fill, coll_reduce_check, AGG_P1, reduce_init),
    P("allreduce", COLL_DOUBLES, MUL_1, MUL_1, coll_reduce_fill, coll_allreduce_check, AGG_2P1, allreduce_init),
    P("allgather", 0, MUL_1, MUL_P, coll_gather_fill, coll_allgather_check, AGG_PP1, allgather_init),
    P("alltoall", 0, MUL_P, MUL_P, coll_alltoall_fill, coll_alltoall_check, AGG_PP1, alltoall_init),
    {0},
};
