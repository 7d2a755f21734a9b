/* Node-aware ("two-level") broadcast, reduce and allreduce, written by the
 * user beside the library's: one level inside each node, one between the
 * node leaders (the communicators of the harness's node map, mb_nodes), with
 * library calls at each level — the hierarchy-aware design of the
 * threaded-MPI work on clusters of SMPs.
 *
 * The "-shm" variants do the node level through an MPI-3 shared-memory
 * window (MPI_Win_allocate_shared) instead of messages — the modern form of
 * that work's threads sharing one address space: ranks store into and load
 * from each other's memory, separated by MPI_Win_sync + a node barrier.
 *
 * The root's node: a root that does not lead its node hands its data to its
 * leader (bcast) or gets the result from it (reduce); the leader level is
 * rooted at the root's node. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_LEVEL = 201 };

static int root_node(const struct coll_state *s) { return s->nodes->node_of[s->root]; }
static int on_root_node(const struct coll_state *s) { return s->nodes->node == root_node(s); }
static int root_leads(const struct coll_state *s) { return s->local_of[s->root] == 0; }
static int leader(const struct coll_state *s) { return s->nodes->leaders != MPI_COMM_NULL; }
/* The first error of a sequence; every rank makes every call of it all the same. */
static int first(int rc, int next) { return rc != MPI_SUCCESS ? rc : next; }

/* ------------------------------------------------------------ messages */

static int bcast_2level(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int n = (int)s->bytes, rc = MPI_SUCCESS;
    MPI_Comm node = s->nodes->comm;
    if (!n) return MPI_SUCCESS;
    if (on_root_node(s) && !root_leads(s)) {
        if (s->rank == s->root) rc = MPI_Send(s->sbuf, n, MPI_BYTE, 0, TAG_LEVEL, node);
        if (leader(s)) rc = MPI_Recv(s->sbuf, n, MPI_BYTE, s->local_of[s->root], TAG_LEVEL, node, MPI_STATUS_IGNORE);
    }
    if (leader(s)) rc = first(rc, MPI_Bcast(s->sbuf, n, MPI_BYTE, root_node(s), s->nodes->leaders));
    return first(rc, MPI_Bcast(s->sbuf, n, MPI_BYTE, 0, node));
}

/* Node sums at the leaders (tbuf), their sum at the root's leader, then to the root. */
static int reduce_2level(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int c = (int)s->count, rc;
    MPI_Comm node = s->nodes->comm;
    if (!c) return MPI_SUCCESS;
    rc = MPI_Reduce(s->sbuf, s->tbuf, c, MPI_DOUBLE, MPI_SUM, 0, node);
    if (leader(s))
        rc = first(rc, MPI_Reduce(s->tbuf, s->rbuf, c, MPI_DOUBLE, MPI_SUM, root_node(s), s->nodes->leaders));
    if (on_root_node(s) && !root_leads(s)) {
        if (leader(s)) rc = first(rc, MPI_Send(s->rbuf, c, MPI_DOUBLE, s->local_of[s->root], TAG_LEVEL, node));
        if (s->rank == s->root) rc = first(rc, MPI_Recv(s->rbuf, c, MPI_DOUBLE, 0, TAG_LEVEL, node, MPI_STATUS_IGNORE));
    }
    return rc;
}

static int allreduce_2level(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int c = (int)s->count, rc;
    MPI_Comm node = s->nodes->comm;
    if (!c) return MPI_SUCCESS;
    rc = MPI_Reduce(s->sbuf, s->tbuf, c, MPI_DOUBLE, MPI_SUM, 0, node);
    if (leader(s)) rc = first(rc, MPI_Allreduce(s->tbuf, s->rbuf, c, MPI_DOUBLE, MPI_SUM, s->nodes->leaders));
    return first(rc, MPI_Bcast(s->rbuf, c, MPI_DOUBLE, 0, node));
}

/* ------------------------------------------------------------ shared memory */

/* Node rank 0 allocates two message-sized shared areas (bcast: a double
 * buffer; reductions: its input slot and the node's result); with slots,
 * every other node rank as much, the first area its slot.  A rank's segment
 * is found from node rank 0's base, as the segments are contiguous (MPI-3
 * without alloc_shared_noncontig): SimGrid SMPI's MPI_Win_shared_query
 * answers every rank's query with node rank 0's base. */
static const char *shm_setup(struct coll_state *s, int slots)
{
    static char why[MPI_MAX_ERROR_STRING + 64];
    MPI_Comm node = s->nodes->comm;
    int L = s->nodes->local_size, me = s->nodes->local_rank, len = 0, unit;
    s->win = MPI_WIN_NULL;
    s->shm = NULL;
    if (!s->bytes) return NULL; /* nothing to share: the calls return at once */
    MPI_Aint seg = 2 * (MPI_Aint)s->bytes, size;
    char *base;
    int rc = MPI_Win_allocate_shared(me == 0 || slots ? seg : 0, 1, MPI_INFO_NULL, node, &base, &s->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_shared_query(s->win, 0, &size, &unit, &base);
    if (rc != MPI_SUCCESS) {
        snprintf(why, sizeof why, "MPI_Win_allocate_shared: ");
        MPI_Error_string(rc, why + strlen(why), &len);
        if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
        return why;
    }
    s->shm = calloc((size_t)L, sizeof *s->shm);
    for (int r = 0; r < L; r++) s->shm[r] = base + (slots ? r * seg : 0);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win); /* one passive epoch: loads and stores between syncs */
    return NULL;
}

static const char *shm_setup_bcast(struct coll_state *s) { return shm_setup(s, 0); }
static const char *shm_setup_reduce(struct coll_state *s) { return shm_setup(s, 1); }

static void shm_free(struct coll_state *s)
{
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    free(s->shm);
    s->shm = NULL;
}

/* What one node rank stored before is visible to every other after it. */
static int node_sync(struct coll_state *s)
{
    MPI_Win_sync(s->win);
    int rc = MPI_Barrier(s->nodes->comm);
    MPI_Win_sync(s->win);
    return rc;
}

/* The root (or its leader, by the leader-level broadcast) stores the message
 * in the node's shared area, every other node rank copies it out.  Calls
 * alternate between two areas, so one node barrier per call is enough: a
 * rank writing the area again (call k + 2) has passed the barrier of call
 * k + 1, which every rank reaches only after copying out of call k. */
static int bcast_2level_shm(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int n = (int)s->bytes, rc = MPI_SUCCESS;
    if (!n) return MPI_SUCCESS;
    char *area = s->shm[0] + (size_t)(s->calls & 1) * s->bytes;
    if (on_root_node(s)) {
        if (s->rank == s->root) memcpy(area, s->sbuf, s->bytes);
        rc = node_sync(s);
        if (leader(s)) rc = first(rc, MPI_Bcast(area, n, MPI_BYTE, root_node(s), s->nodes->leaders));
    } else {
        if (leader(s)) rc = MPI_Bcast(area, n, MPI_BYTE, root_node(s), s->nodes->leaders);
        rc = first(rc, node_sync(s));
    }
    if (s->rank != s->root) memcpy(s->sbuf, area, s->bytes);
    return rc;
}

/* Every node rank stores its input in its slot; after a barrier each sums
 * its share of the elements over all slots into the node's result area;
 * after another the leader has the node's sum.  Returns that area. */
static double *node_sum(struct coll_state *s, int *rc)
{
    int L = s->nodes->local_size, me = s->nodes->local_rank;
    double *res = (double *)(s->shm[0] + s->bytes);
    memcpy(s->shm[me], s->sbuf, s->bytes);
    *rc = node_sync(s);
    size_t lo = s->count * (size_t)me / (size_t)L, hi = s->count * (size_t)(me + 1) / (size_t)L;
    for (size_t g = lo; g < hi; g++) {
        double sum = 0;
        for (int r = 0; r < L; r++) sum += ((const double *)s->shm[r])[g];
        res[g] = sum;
    }
    *rc = first(*rc, node_sync(s));
    return res;
}

/* The slots are written again only after the second barrier of node_sum,
 * which every reader has passed; the result area only after the first
 * barrier of the next call, which the root reaches after copying out. */
static int reduce_2level_shm(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int c = (int)s->count, rc;
    if (!c) return MPI_SUCCESS;
    double *res = node_sum(s, &rc);
    if (leader(s)) {
        int top = on_root_node(s);
        rc = first(rc, MPI_Reduce(top ? MPI_IN_PLACE : res, top ? res : NULL, c, MPI_DOUBLE, MPI_SUM, root_node(s),
                                  s->nodes->leaders));
    }
    if (on_root_node(s)) {
        if (!root_leads(s)) rc = first(rc, node_sync(s));
        if (s->rank == s->root) memcpy(s->rbuf, res, s->bytes);
    }
    return rc;
}

static int allreduce_2level_shm(struct coll_state *s, MPI_Request *req)
{
    (void)req;
    int c = (int)s->count, rc;
    if (!c) return MPI_SUCCESS;
    double *res = node_sum(s, &rc);
    if (leader(s)) rc = first(rc, MPI_Allreduce(MPI_IN_PLACE, res, c, MPI_DOUBLE, MPI_SUM, s->nodes->leaders));
    rc = first(rc, node_sync(s));
    memcpy(s->rbuf, res, s->bytes);
    return rc;
}

/* ------------------------------------------------------------ the table */

#define R COLL_ROOTED
#define D COLL_DOUBLES
const struct coll_op coll_twolevel[] = {
    {"bcast", "2level", R, MUL_1, MUL_0, bcast_2level, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL, NULL},
    {"bcast", "2level-shm", R, MUL_1, MUL_0, bcast_2level_shm, coll_bcast_fill, coll_bcast_check, AGG_P1,
     shm_setup_bcast, shm_free},
    {"reduce", "2level", R | D, MUL_1, MUL_1, reduce_2level, coll_reduce_fill, coll_reduce_check, AGG_P1, NULL,
     NULL},
    {"reduce", "2level-shm", R | D, MUL_1, MUL_1, reduce_2level_shm, coll_reduce_fill, coll_reduce_check, AGG_P1,
     shm_setup_reduce, shm_free},
    {"allreduce", "2level", D, MUL_1, MUL_1, allreduce_2level, coll_reduce_fill, coll_allreduce_check, AGG_2P1,
     NULL, NULL},
    {"allreduce", "2level-shm", D, MUL_1, MUL_1, allreduce_2level_shm, coll_reduce_fill, coll_allreduce_check,
     AGG_2P1, shm_setup_reduce, shm_free},
    {0},
};
