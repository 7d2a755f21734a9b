/* Which node each rank is on: the node's name, and the ranks of a
 * communicator grouped by node (a communicator per node, its leaders). */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef MB_SIMULATED
#include <simgrid/host.h>
#endif

void mb_node_name(char *name, size_t len)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int n = 0;
    MPI_Get_processor_name(host, &n);
#ifdef MB_SIMULATED
    /* A platform may give a node one SimGrid host per process (SimGrid's IB
     * model counts a NIC's messages per host: scripts/make-torus-platform's
     * XT4); the host's mpimb/node property then names the node. */
    const char *node = sg_host_get_property_value(sg_host_self(), "mpimb/node");
    if (node) {
        snprintf(name, len, "%s", node);
        return;
    }
#endif
    snprintf(name, len, "%s", host);
}

#ifdef MB_SIMULATED
/* SMPI's MPI_COMM_TYPE_SHARED groups the ranks of a SimGrid host, not of a
 * node: group by mb_node_name.  A split by the name's hash first, so no rank
 * holds every rank's name (all ranks share one process here), then by the
 * first rank of each name among those sharing the hash. */
static void split_by_node(MPI_Comm comm, int rank, MPI_Comm *node)
{
    enum { NAME = 128 };
    char mine[NAME] = {0};
    mb_node_name(mine, sizeof mine);
    unsigned h = 2166136261u; /* FNV-1a */
    for (const char *c = mine; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
    MPI_Comm same;
    MPI_Comm_split(comm, (int)(h & INT_MAX), rank, &same);
    int n, me;
    MPI_Comm_size(same, &n);
    MPI_Comm_rank(same, &me);
    char *all = malloc((size_t)n * NAME);
    MPI_Allgather(mine, NAME, MPI_CHAR, all, NAME, MPI_CHAR, same);
    int first = me;
    for (int r = 0; r < me; r++)
        if (!strcmp(all + (size_t)r * NAME, mine)) {
            first = r;
            break;
        }
    free(all);
    MPI_Comm_split(same, first, rank, node);
    MPI_Comm_free(&same);
}
#endif

void mb_nodes_init(MPI_Comm comm, struct mb_nodes *n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    *n = (struct mb_nodes){.leaders = MPI_COMM_NULL};
#ifdef MB_SIMULATED
    split_by_node(comm, rank, &n->comm);
#else
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &n->comm);
#endif
    MPI_Comm_rank(n->comm, &n->local_rank);
    MPI_Comm_size(n->comm, &n->local_size);
    n->leader = rank;
    MPI_Bcast(&n->leader, 1, MPI_INT, 0, n->comm); /* local rank 0 is the lowest rank: split by key = rank */
    MPI_Comm_split(comm, n->local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &n->leaders);
    /* every rank's leader; a leader's node number is its position among the leaders */
    n->node_of = malloc((size_t)size * sizeof *n->node_of);
    MPI_Allgather(&n->leader, 1, MPI_INT, n->node_of, 1, MPI_INT, comm);
    n->nnodes = 0;
    for (int r = 0; r < size; r++) n->node_of[r] = n->node_of[r] == r ? n->nnodes++ : n->node_of[n->node_of[r]];
    n->node = n->node_of[rank];
    MPI_Allreduce(&n->local_size, &n->ppn, 1, MPI_INT, MPI_MAX, comm);
}

void mb_nodes_free(struct mb_nodes *n)
{
    if (n->comm != MPI_COMM_NULL) MPI_Comm_free(&n->comm);
    if (n->leaders != MPI_COMM_NULL) MPI_Comm_free(&n->leaders);
    free(n->node_of);
    n->node_of = NULL;
}
