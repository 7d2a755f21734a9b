/* --comms: the communicators a collective runs on.  world is
 * MPI_COMM_WORLD itself (a library may treat it specially, e.g. with
 * hardware collectives), dup a duplicate of it, split its two halves (each
 * runs its own collective, at the same time), node the harness's node
 * communicator (every node at once).  Each gets its node map for the
 * two-level algorithms: world and dup have world's (the harness's run->nodes,
 * with private copies of its communicators), split and node their own
 * (mb_nodes_init).  Errors return, so a library's refusal is an n/a row. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

static void errors_return(MPI_Comm c)
{
    if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
}

/* World's node map with its own node and leaders communicators. */
static void copy_world_nodes(const struct mb_run *run, struct mb_nodes *n)
{
    const struct mb_nodes *w = &run->nodes;
    *n = *w;
    MPI_Comm_dup(w->comm, &n->comm);
    if (w->leaders != MPI_COMM_NULL) MPI_Comm_dup(w->leaders, &n->leaders);
    n->node_of = malloc((size_t)run->nprocs * sizeof *n->node_of);
    memcpy(n->node_of, w->node_of, (size_t)run->nprocs * sizeof *n->node_of);
}

int coll_comms_open(const struct mb_run *run, unsigned long mask, struct coll_comm *out)
{
    static const char *const names[NCOMMS] = {"world", "dup", "split", "node"};
    int P = run->nprocs, k = 0;
    for (int i = 0; i < NCOMMS; i++) {
        if (!(mask >> i & 1)) continue;
        struct coll_comm *c = &out[k++];
        c->name = names[i];
        switch (i) {
        case COMM_WORLD:
            c->comm = MPI_COMM_WORLD;
            copy_world_nodes(run, &c->nodes);
            snprintf(c->label, sizeof c->label, "world: %d ranks", P);
            break;
        case COMM_DUP:
            MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
            copy_world_nodes(run, &c->nodes);
            snprintf(c->label, sizeof c->label, "dup: %d ranks", P);
            break;
        case COMM_SPLIT: /* the first half has the extra rank when P is odd */
            MPI_Comm_split(MPI_COMM_WORLD, run->rank < (P + 1) / 2 ? 0 : 1, run->rank, &c->comm);
            mb_nodes_init(c->comm, &c->nodes);
            if (P > 1)
                snprintf(c->label, sizeof c->label, "split: %d+%d ranks", (P + 1) / 2, P / 2);
            else
                snprintf(c->label, sizeof c->label, "split: 1 rank");
            break;
        case COMM_NODE:
            MPI_Comm_dup(run->nodes.comm, &c->comm);
            mb_nodes_init(c->comm, &c->nodes);
            if (run->nnodes * run->ppn == P)
                snprintf(c->label, sizeof c->label, "node: %dx%d ranks", run->nnodes, run->ppn);
            else
                snprintf(c->label, sizeof c->label, "node: %d nodes", run->nnodes);
            break;
        }
        errors_return(c->comm);
        errors_return(c->nodes.comm);
        errors_return(c->nodes.leaders);
        /* every rank's rank within its node: the communicator order within each node */
        int size, *seen = calloc((size_t)P, sizeof *seen);
        MPI_Comm_size(c->comm, &size);
        c->local_of = malloc((size_t)size * sizeof *c->local_of);
        for (int r = 0; r < size; r++) c->local_of[r] = seen[c->nodes.node_of[r]]++;
        free(seen);
    }
    return k;
}

void coll_comms_close(struct coll_comm *c, int n)
{
    for (int i = 0; i < n; i++) {
        mb_nodes_free(&c[i].nodes);
        free(c[i].local_of);
        if (c[i].comm != MPI_COMM_WORLD) MPI_Comm_free(&c[i].comm);
    }
}
