/* User-level broadcast algorithms, written with point-to-point calls (and,
 * for van de Geijn's, the library's scatter), compared with MPI_Bcast in the
 * same run (binomial tree, pipelined chain and binary tree, scatter +
 * allgather); and the series test: m successive broadcasts of n bytes, as an
 * MPI_Bcast loop and as a pipelined chain that forwards each message as soon
 * as it has arrived.  Ranks are numbered relative to the root (vr). */
#include "coll.h"

enum { TAG_BINOMIAL = 101, TAG_PIPE = 102, TAG_RING = 103 };

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

/* A pipelined broadcast over total bytes in segments of seg bytes: receive
 * each segment from parent (none at the root), then forward it to the nk
 * children.  The next segment's receive is posted before the current one is
 * forwarded, so segments stream through the tree. */
static void pipeline(struct coll_state *s, char *buf, size_t total, size_t seg, int parent, const int *kids, int nk)
{
    if (total == 0 || (parent < 0 && nk == 0)) return;
    size_t nseg = (total + seg - 1) / seg;
    MPI_Request rreq = MPI_REQUEST_NULL;
#define SEGLEN(i) ((int)((i) + 1 < nseg ? seg : total - (i) * seg))
    if (parent >= 0) MPI_Irecv(buf, SEGLEN(0), MPI_BYTE, parent, TAG_PIPE, s->comm, &rreq);
    for (size_t i = 0; i < nseg; i++) {
        if (parent >= 0) {
            MPI_Wait(&rreq, MPI_STATUS_IGNORE);
            if (i + 1 < nseg)
                MPI_Irecv(buf + (i + 1) * seg, SEGLEN(i + 1), MPI_BYTE, parent, TAG_PIPE, s->comm, &rreq);
        }
        for (int k = 0; k < nk; k++)
            MPI_Isend(buf + i * seg, SEGLEN(i), MPI_BYTE, kids[k], TAG_PIPE, s->comm, &s->reqs[2 * i + (size_t)k]);
    }
#undef SEGLEN
    /* (a loop: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE in MPI_Waitall here) */
    for (size_t i = 0; i < nseg; i++)
        for (int k = 0; k < nk; k++) MPI_Wait(&s->reqs[2 * i + (size_t)k], MPI_STATUS_IGNORE);
}

/* The chain root -> vr 1 -> vr 2 -> ... */
static void chain(struct coll_state *s, char *buf, size_t total, size_t seg)
{
    int P = s->size, vr = rel(s), next = abs_rank(s, vr + 1);
    pipeline(s, buf, total, seg, vr > 0 ? abs_rank(s, vr - 1 + P) : -1, &next, vr < P - 1);
}

static int bcast_chain(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    chain(s, s->sbuf, s->bytes, s->segment);
    return MPI_SUCCESS;
}

/* The binary tree: vr's parent is (vr - 1) / 2, its children 2 vr + 1 and
 * 2 vr + 2 (the first served first). */
static int bcast_tree_pipelined(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int P = s->size, vr = rel(s), kids[2], nk = 0;
    for (int c = 2 * vr + 1; c <= 2 * vr + 2 && c < P; c++) kids[nk++] = abs_rank(s, c);
    pipeline(s, s->sbuf, s->bytes, s->segment, vr > 0 ? abs_rank(s, (vr - 1) / 2) : -1, kids, nk);
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
#define SEG COLL_SEGMENTED
const struct coll_op coll_algorithms[] = {
    {"bcast", "binomial", R, MUL_1, MUL_0, binomial, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL, NULL},
    {"bcast", "chain", R | SEG, MUL_1, MUL_0, bcast_chain, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL, NULL},
    {"bcast", "tree-pipelined", R | SEG, MUL_1, MUL_0, bcast_tree_pipelined, coll_bcast_fill, coll_bcast_check,
     AGG_P1, NULL, NULL},
    {"bcast", "scatter-allgather", R, MUL_1, MUL_0, scatter_allgather, coll_bcast_fill, coll_bcast_check, AGG_P1,
     NULL, NULL},
    {"series", "bcast-loop", R, MUL_M, MUL_0, series_bcast_loop, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL,
     NULL},
    {"series", "chain", R, MUL_M, MUL_0, series_chain, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL, NULL},
    {0},
};
