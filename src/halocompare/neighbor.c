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
 *   Every call is then defined by the standard.
 * --layout array (docs/halo-array.md): always the graph with one edge per
 *   distinct partner, the messages of a partner in the order above: packed
 *   faces (pack, mpi-pack) by MPI_(I)Neighbor_alltoallv over blocks of
 *   scount[] / rcount[] elements of stype (doubles or MPI_PACKED bytes);
 *   datatypes by MPI_(I)Neighbor_alltoallw in place, the block of a partner
 *   one struct of its messages' subarray types (receive types displaced by
 *   one double: the receive buffer is the array + 1, the send buffer the
 *   array, so that the two buffer arguments differ).
 * persistent-neighbor: the same call (alltoall, alltoallv or alltoallw, as
 *   above) made once as a persistent request (MPI-4 MPI_Neighbor_*_init;
 *   Open MPI 4.1's MPIX_ forms from its pcollreq extension), then
 *   MPI_Start + MPI_Wait per exchange. */
#include "halo.h"

#include <stdlib.h>

#if defined(MB_SIMULATED)
/* nbr_setup says why */
#elif MPI_VERSION >= 4
#define NBR_INIT(kind) MPI_Neighbor_##kind##_init
#elif defined(OMPI_MAJOR_VERSION)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBR_INIT(kind) MPIX_Neighbor_##kind##_init
#else
#define NBR_INIT_NONE "this Open MPI was built without its pcollreq extension (MPIX_Neighbor_alltoall_init)"
#endif
#else
#define NBR_STR_(x) #x
#define NBR_STR(x) NBR_STR_(x)
#define NBR_INIT_NONE                                                                                                \
    "MPI_Neighbor_alltoall_init needs MPI-4; this MPI library is MPI-" NBR_STR(MPI_VERSION) "." NBR_STR(MPI_SUBVERSION)
#endif

/* A method's state (h->priv): every member of a group has its own. */
struct nbr {
    MPI_Comm topo;
    double *sb, *rb;
    int v;                                   /* alltoallv (degenerate mesh, or packed array faces) */
    int cnt[MAXDIR], displ[MAXDIR];          /* alltoallv: per distinct partner, in elements of elt */
    int rcnt[MAXDIR], rdispl[MAXDIR];
    MPI_Datatype elt;
    int w, np;                               /* alltoallw: array datatypes, np partners */
    MPI_Datatype wst[MAXDIR], wrt[MAXDIR];   /* per partner: struct of its messages' types */
    int one[MAXDIR];
    MPI_Aint zero[MAXDIR];
    MPI_Request preq; /* persistent-neighbor: the request made once */
};

/* The struct of the m types ty[list[0..m)] (all displaced by disp bytes). */
static MPI_Datatype gather_types(const MPI_Datatype *ty, const int *list, int m, MPI_Aint disp)
{
    int len[MAXDIR];
    MPI_Aint at[MAXDIR];
    MPI_Datatype parts[MAXDIR], out;
    for (int j = 0; j < m; j++) {
        len[j] = 1;
        at[j] = disp;
        parts[j] = ty[list[j]];
    }
    MPI_Type_create_struct(m, len, at, parts, &out);
    MPI_Type_commit(&out);
    return out;
}

/* A periodic extent of 1 or 2: some partner is ours in several directions. */
static int degenerate(const struct halo *h)
{
    int small = 0;
    for (int i = 0; i < h->ndims; i++) small |= h->dims[i] <= 2;
    return h->periodic && small;
}

/* --layout array: per partner k (nmsg[k] messages, in order_s / order_d),
 * its struct types (datatype) or its block of the packed messages. */
static const char *array_blocks(struct halo *h, struct nbr *t, const int *order_s, const int *order_d,
                                const int *nmsg)
{
    int j = 0, so = 0, ro = 0, soff[MAXDIR], roff[MAXDIR], esize;
    MPI_Type_size(t->elt, &esize);
    for (int k = 0; k < t->np; j += nmsg[k], k++) {
        t->one[k] = 1;
        t->zero[k] = 0;
        if (t->w) {
            t->wst[k] = gather_types(h->stype, order_d + j, nmsg[k], 0);
            t->wrt[k] = gather_types(h->rtype, order_s + j, nmsg[k], -(MPI_Aint)sizeof(double));
            continue;
        }
        t->displ[k] = so;
        t->rdispl[k] = ro;
        for (int m = j; m < j + nmsg[k]; m++) {
            soff[m] = so;
            roff[m] = ro;
            so += h->scount[order_d[m]];
            ro += h->rcount[order_s[m]];
        }
        t->cnt[k] = so - t->displ[k];
        t->rcnt[k] = ro - t->rdispl[k];
    }
    if (t->w) return NULL;
    t->sb = mb_alloc(so ? (size_t)so * (size_t)esize : 1);
    t->rb = mb_alloc(ro ? (size_t)ro * (size_t)esize : 1);
    for (int m = 0; m < j; m++) {
        h->sbuf[order_d[m]] = (double *)(void *)((char *)t->sb + (size_t)soff[m] * (size_t)esize);
        h->rbuf[order_s[m]] = (double *)(void *)((char *)t->rb + (size_t)roff[m] * (size_t)esize);
    }
    return NULL;
}

static const char *nbr_setup(struct halo *h)
{
#ifdef MB_SIMULATED
    (void)h;
    (void)degenerate;
    (void)array_blocks;
    return "not supported by SimGrid SMPI";
#else
    /* order_s[k] / order_d[k]: the direction of the k-th count-sized receive / send block */
    int order_s[MAXDIR], order_d[MAXDIR], peers[MAXDIR], n = 0, np = 0, err;
    const char *what;
    struct nbr *t = h->priv = calloc(1, sizeof *t);
    t->v = degenerate(h) || h->arr;
    t->w = h->arr && h->packing == PACK_DATATYPE;
    t->elt = h->stype[0];
    int nmsg[MAXDIR];
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
            nmsg[k] = m;
            t->rcnt[k] = t->cnt[k];
            t->rdispl[k] = t->displ[k];
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
        static char why[MPI_MAX_ERROR_STRING + 96]; /* room for the longest `what` */
        char msg[MPI_MAX_ERROR_STRING] = "on another rank";
        int len;
        if (!ok) MPI_Error_string(err, msg, &len);
        snprintf(why, sizeof why, "creating the %s topology failed: %s", what, msg);
        free(t); /* a topology that exists on some ranks only cannot be freed collectively: leave it */
        h->priv = NULL;
        return why;
    }
    t->np = np;
    if (h->arr) return array_blocks(h, t, order_s, order_d, nmsg);
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
    double *a = h->sbuf[0]; /* datatypes: the array */
    if (t->w)
        for (long it = 0; it < iters; it++)
            MPI_Neighbor_alltoallw(a, t->one, t->zero, t->wst, a + 1, t->one, t->zero, t->wrt, t->topo);
    else if (t->v)
        for (long it = 0; it < iters; it++)
            MPI_Neighbor_alltoallv(t->sb, t->cnt, t->displ, t->elt, t->rb, t->rcnt, t->rdispl, t->elt, t->topo);
    else
        for (long it = 0; it < iters; it++)
            MPI_Neighbor_alltoall(t->sb, h->count, MPI_DOUBLE, t->rb, h->count, MPI_DOUBLE, t->topo);
}

static void ineighbor_run(struct halo *h, long iters)
{
    struct nbr *t = h->priv;
    for (long it = 0; it < iters; it++) {
        MPI_Request r;
        double *a = h->sbuf[0];
        if (t->w)
            MPI_Ineighbor_alltoallw(a, t->one, t->zero, t->wst, a + 1, t->one, t->zero, t->wrt, t->topo, &r);
        else if (t->v)
            MPI_Ineighbor_alltoallv(t->sb, t->cnt, t->displ, t->elt, t->rb, t->rcnt, t->rdispl, t->elt, t->topo, &r);
        else
            MPI_Ineighbor_alltoall(t->sb, h->count, MPI_DOUBLE, t->rb, h->count, MPI_DOUBLE, t->topo, &r);
        halo_phase(h, PH_SEND); /* one call starts the receives and the sends: no post of its own */
        mb_compute(); /* --overlap (overlap.c) */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

static void nbr_free(struct halo *h)
{
    struct nbr *t = h->priv;
    MPI_Comm_free(&t->topo);
    for (int k = 0; k < t->np && t->w; k++) {
        MPI_Type_free(&t->wst[k]);
        MPI_Type_free(&t->wrt[k]);
    }
    free(t->sb);
    free(t->rb);
    free(t);
    h->priv = NULL;
}

static const char *persistent_setup(struct halo *h)
{
#if defined(NBR_INIT_NONE)
    (void)h;
    return NBR_INIT_NONE;
#else
    const char *why = nbr_setup(h);
#if defined(NBR_INIT)
    if (why) return why;
    struct nbr *t = h->priv;
    double *a = h->sbuf[0]; /* datatypes: the array */
    if (t->w)
        NBR_INIT(alltoallw)(a, t->one, t->zero, t->wst, a + 1, t->one, t->zero, t->wrt, t->topo, MPI_INFO_NULL,
                            &t->preq);
    else if (t->v)
        NBR_INIT(alltoallv)(t->sb, t->cnt, t->displ, t->elt, t->rb, t->rcnt, t->rdispl, t->elt, t->topo,
                            MPI_INFO_NULL, &t->preq);
    else
        NBR_INIT(alltoall)(t->sb, h->count, MPI_DOUBLE, t->rb, h->count, MPI_DOUBLE, t->topo, MPI_INFO_NULL,
                           &t->preq);
#endif
    return why;
#endif
}

static void persistent_run(struct halo *h, long iters)
{
    struct nbr *t = h->priv;
    for (long it = 0; it < iters; it++) {
        MPI_Start(&t->preq);
        halo_phase(h, PH_SEND); /* one start for the receives and the sends */
        mb_compute();
        MPI_Wait(&t->preq, MPI_STATUS_IGNORE);
        halo_phase(h, PH_WAIT);
    }
}

static void persistent_free(struct halo *h)
{
    MPI_Request_free(&((struct nbr *)h->priv)->preq);
    nbr_free(h);
}

const struct halo_method halo_neighbor_methods[] = {
    {"neighbor-alltoall", nbr_setup, alltoall_run, nbr_free,
     "a neighbourhood collective posts, sends and waits in one call"},
    {"neighbor-ineighbor", nbr_setup, ineighbor_run, nbr_free, NULL},
    {"persistent-neighbor", persistent_setup, persistent_run, persistent_free, NULL},
    {0},
};
