/* MPI-3 neighbourhood collectives: MPI_Neighbor_alltoall (and the
 * nonblocking MPI_Ineighbor_alltoall) on a topology built from the
 * communicator under test, without reordering, so that ranks stay the
 * communicator's.  setup() repoints sbuf[] and rbuf[] into two contiguous
 * arrays whose blocks follow the topology's neighbour order.
 *
 * Faces (2 neighbours in 1-D, 4 in 2-D, 6 in 3-D): a Cartesian communicator
 *   (MPI_Cart_create, reorder 0); its neighbour order (per dimension -1,
 *   then +1) is the order of the directions (grid.c), so block k is
 *   direction k, and what I send to my -1 neighbour arrives in its +1 block.
 * The full stencil (8 in 2-D, 26 in 3-D): a distributed graph
 *   (MPI_Dist_graph_create_adjacent, reorder 0), sources = destinations =
 *   partner[d] for the directions d that have one; receive block k ->
 *   rbuf[d_k], send block k <- sbuf[d_k].
 * Degenerate periodic meshes (a periodic extent of 1 or 2 processes: a
 *   partner that is ours several times, or ourselves): the pairing of
 *   repeated edges differs between libraries (measured: MPICH 4.0.2 pairs a
 *   dist graph's repeated edges, and a 1x1 periodic cart's, in reverse
 *   order; Open MPI 4.1.4 in order), so there the methods use one graph edge
 *   per distinct partner and MPI_(I)Neighbor_alltoallv: the block for
 *   partner q holds every message to q, the directions e with partner[e] = q
 *   sorted by opp[e]; the block from q is unpacked into rbuf[d] for the
 *   directions d with partner[d] = q in increasing d — the j-th message q
 *   sends me is the one sent in direction opp[d_j], as rbuf[d_j] expects.
 *   Every call is then defined by the standard. */
#include "halo.h"

#include <stdlib.h>

/* A method's state (h->priv): every member of a group has its own. */
struct nbr {
    MPI_Comm topo;
    double *sb, *rb;
    int v;                                   /* alltoallv (degenerate mesh) */
    int cnt[MAXDIR], displ[MAXDIR];          /* alltoallv: per distinct partner, in doubles */
};

/* A periodic extent of 1 or 2: some partner is ours in several directions. */
static int degenerate(const struct halo *h)
{
    int small = 0;
    for (int i = 0; i < h->ndims; i++) small |= h->dims[i] <= 2;
    return h->periodic && small;
}

static const char *nbr_setup(struct halo *h)
{
#ifdef MB_SIMULATED
    (void)h;
    (void)degenerate;
    return "not supported by SimGrid SMPI";
#else
    /* order_s[k] / order_d[k]: the direction of the k-th count-sized receive / send block */
    int order_s[MAXDIR], order_d[MAXDIR], peers[MAXDIR], n = 0, np = 0, err;
    const char *what;
    struct nbr *t = h->priv = calloc(1, sizeof *t);
    t->v = degenerate(h);
    MPI_Errhandler old;
    MPI_Comm_get_errhandler(h->comm, &old);
    MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN);
    /* unit weights rather than MPI_UNWEIGHTED, which GCC takes for an empty array */
    int w[MAXDIR];
    for (int k = 0; k < MAXDIR; k++) w[k] = 1;
    if (t->v) {
        what = "graph (one edge per distinct partner)";
        for (int i = 0; i < h->ndirs; i++) {
            int p = h->partner[h->dirs[i]], seen = 0;
            for (int k = 0; k < np; k++) seen |= peers[k] == p;
            if (!seen) peers[np++] = p;
        }
        for (int k = 0; k < np; k++) {
            int m = 0;
            t->displ[k] = n * h->count;
            for (int d = 0; d < h->nnbr; d++) {
                if (h->partner[d] == peers[k]) order_s[n + m++] = d;
            }
            m = 0;
            for (int j = 0; j < h->nnbr; j++) {
                int e = h->opp[j];
                if (h->partner[e] == peers[k]) order_d[n + m++] = e;
            }
            t->cnt[k] = m * h->count;
            n += m;
        }
        err = MPI_Dist_graph_create_adjacent(h->comm, np, peers, w, np, peers, w, MPI_INFO_NULL, 0, &t->topo);
    } else if (h->nnbr == halo_faces(h->ndims)) {
        int periods[MAXDIM] = {h->periodic, h->periodic, h->periodic};
        what = "Cartesian";
        for (n = 0; n < h->nnbr; n++) order_s[n] = order_d[n] = n;
        err = MPI_Cart_create(h->comm, h->ndims, h->dims, periods, 0, &t->topo);
    } else {
        what = "graph";
        for (n = 0; n < h->ndirs; n++) {
            order_s[n] = order_d[n] = h->dirs[n];
            peers[n] = h->partner[h->dirs[n]];
        }
        err = MPI_Dist_graph_create_adjacent(h->comm, n, peers, w, n, peers, w, MPI_INFO_NULL, 0, &t->topo);
    }
    MPI_Comm_set_errhandler(h->comm, old);
    MPI_Errhandler_free(&old);
    int ok = err == MPI_SUCCESS, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, h->comm);
    if (!all) {
        static char why[MPI_MAX_ERROR_STRING + 64];
        char msg[MPI_MAX_ERROR_STRING] = "on another rank";
        int len;
        if (!ok) MPI_Error_string(err, msg, &len);
        snprintf(why, sizeof why, "creating the %s topology failed: %s", what, msg);
        free(t); /* a topology that exists on some ranks only cannot be freed collectively: leave it */
        h->priv = NULL;
        return why;
    }
    size_t blk = (size_t)h->count;
    t->sb = mb_alloc((n ? (size_t)n : 1) * blk * sizeof(double));
    t->rb = mb_alloc((n ? (size_t)n : 1) * blk * sizeof(double));
    for (int k = 0; k < n; k++) {
        h->sbuf[order_d[k]] = t->sb + k * blk;
        h->rbuf[order_s[k]] = t->rb + k * blk;
    }
    return NULL;
#endif
}

static void alltoall_run(struct halo *h, long iters)
{
    struct nbr *t = h->priv;
    if (t->v)
        for (long it = 0; it < iters; it++)
            MPI_Neighbor_alltoallv(t->sb, t->cnt, t->displ, MPI_DOUBLE, t->rb, t->cnt, t->displ, MPI_DOUBLE, t->topo);
    else
        for (long it = 0; it < iters; it++)
            MPI_Neighbor_alltoall(t->sb, h->count, MPI_DOUBLE, t->rb, h->count, MPI_DOUBLE, t->topo);
}

static void ineighbor_run(struct halo *h, long iters)
{
    struct nbr *t = h->priv;
    for (long it = 0; it < iters; it++) {
        MPI_Request r;
        if (t->v)
            MPI_Ineighbor_alltoallv(t->sb, t->cnt, t->displ, MPI_DOUBLE, t->rb, t->cnt, t->displ, MPI_DOUBLE, t->topo, &r);
        else
            MPI_Ineighbor_alltoall(t->sb, h->count, MPI_DOUBLE, t->rb, h->count, MPI_DOUBLE, t->topo, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void nbr_free(struct halo *h)
{
    struct nbr *t = h->priv;
    MPI_Comm_free(&t->topo);
    free(t->sb);
    free(t->rb);
    free(t);
    h->priv = NULL;
}

const struct halo_method halo_neighbor_methods[] = {
    {"neighbor-alltoall", nbr_setup, alltoall_run, nbr_free},
    {"neighbor-ineighbor", nbr_setup, ineighbor_run, nbr_free},
    {0},
};
