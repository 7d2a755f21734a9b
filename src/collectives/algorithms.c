/* User-level broadcast algorithms, written with point-to-point calls (and,
 * for van de Geijn's, the library's scatter), compared with MPI_Bcast in the
 * same run; and the series test: m successive broadcasts of n bytes, as an
 * MPI_Bcast loop and as a pipelined chain that forwards each message as soon
 * as it has arrived.  Ranks are numbered relative to the root (vr). */
#include "coll.h"

enum { TAG_BINOMIAL = 101, TAG_CHAIN = 102, TAG_RING = 103 };

static int rel(const struct coll_state *s) { return (s->rank - s->root + s->size) % s->size; }
static int abs_rank(const struct coll_state *s, int vr) { return (vr + s->root) % s->size; }

/* Binomial tree: receive from the parent (vr with its lowest set bit
 * cleared), then send to the children, the farthest subtree first. */
static int binomial(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int P = s->size, vr = rel(s), mask = 1, n = (int)s->bytes;
    if (!n) return MPI_SUCCESS;
    for (; mask < P; mask <<= 1)
        if (vr & mask) {
            MPI_Recv(s->sbuf, n, MPI_BYTE, abs_rank(s, vr - mask), TAG_BINOMIAL, s->comm, MPI_STATUS_IGNORE);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < P) MPI_Send(s->sbuf, n, MPI_BYTE, abs_rank(s, vr + mask), TAG_BINOMIAL, s->comm);
    return MPI_SUCCESS;
}

/* Pipelined chain root -> vr 1 -> vr 2 -> ... over total bytes in segments of
 * seg bytes: the next segment's receive is posted before the current one is
 * forwarded, and every segment is forwarded as soon as it has arrived. */
static void chain(struct coll_state *s, char *buf, size_t total, size_t seg)
{
    int P = s->size, vr = rel(s);
    if (P == 1 || total == 0) return;
    int prev = abs_rank(s, vr - 1 + P), next = abs_rank(s, vr + 1);
    size_t nseg = (total + seg - 1) / seg;
    MPI_Request rreq = MPI_REQUEST_NULL;
#define SEGLEN(i) ((int)((i) + 1 < nseg ? seg : total - (i) * seg))
    if (vr > 0) MPI_Irecv(buf, SEGLEN(0), MPI_BYTE, prev, TAG_CHAIN, s->comm, &rreq);
    for (size_t i = 0; i < nseg; i++) {
        if (vr > 0) {
            MPI_Wait(&rreq, MPI_STATUS_IGNORE);
            if (i + 1 < nseg)
                MPI_Irecv(buf + (i + 1) * seg, SEGLEN(i + 1), MPI_BYTE, prev, TAG_CHAIN, s->comm, &rreq);
        }
        if (vr < P - 1) MPI_Isend(buf + i * seg, SEGLEN(i), MPI_BYTE, next, TAG_CHAIN, s->comm, &s->reqs[i]);
    }
#undef SEGLEN
    if (vr < P - 1) /* (a loop: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE in MPI_Waitall here) */
        for (size_t i = 0; i < nseg; i++) MPI_Wait(&s->reqs[i], MPI_STATUS_IGNORE);
}

static int bcast_chain(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    chain(s, s->sbuf, s->bytes, s->segment);
    return MPI_SUCCESS;
}

/* van de Geijn: scatter the message in P chunks (chunk i to rank i), then a
 * ring allgather: in step k every rank passes chunk (rank - k) to its right
 * neighbour and receives chunk (rank - k - 1) from its left one. */
static int scatter_allgather(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int P = s->size, me = s->rank;
    if (!s->bytes) return MPI_SUCCESS;
    int *c = s->counts, *d = s->displs;
    int rc = MPI_Scatterv(s->sbuf, c, d, MPI_BYTE, me == s->root ? MPI_IN_PLACE : s->sbuf + d[me], c[me], MPI_BYTE,
                          s->root, s->comm);
    if (rc != MPI_SUCCESS) return rc;
    int right = (me + 1) % P, left = (me - 1 + P) % P;
    for (int k = 0; k < P - 1; k++) {
        int sb = (me - k + P) % P, rb = (me - k - 1 + P) % P;
        MPI_Sendrecv(s->sbuf + d[sb], c[sb], MPI_BYTE, right, TAG_RING, s->sbuf + d[rb], c[rb], MPI_BYTE, left,
                     TAG_RING, s->comm, MPI_STATUS_IGNORE);
    }
    return MPI_SUCCESS;
}

/* The series: m messages of n bytes, message j at sbuf + j n. */
static int series_bcast_loop(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    for (long j = 0; j < s->messages; j++) {
        int rc = MPI_Bcast(s->sbuf + (size_t)j * s->bytes, (int)s->bytes, MPI_BYTE, s->root, s->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int series_chain(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    chain(s, s->sbuf, (size_t)s->messages * s->bytes, s->bytes ? s->bytes : 1);
    return MPI_SUCCESS;
}

#define R COLL_ROOTED
const struct coll_op coll_algorithms[] = {
    {"bcast", "binomial", R, MUL_1, MUL_0, binomial, coll_bcast_fill, coll_bcast_check},
    {"bcast", "chain", R, MUL_1, MUL_0, bcast_chain, coll_bcast_fill, coll_bcast_check},
    {"bcast", "scatter-allgather", R, MUL_1, MUL_0, scatter_allgather, coll_bcast_fill, coll_bcast_check},
    {"series", "bcast-loop", R, MUL_M, MUL_0, series_bcast_loop, coll_bcast_fill, coll_bcast_check},
    {"series", "chain", R, MUL_M, MUL_0, series_chain, coll_bcast_fill, coll_bcast_check},
    {0},
};
