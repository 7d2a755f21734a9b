/* Where the ranks live: a node index per rank (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED), the first node-local pair and the first pair that
 * crosses nodes. */
#include "pingpong.h"

#include <stdlib.h>

void pp_place_init(struct pp_place *pl, MPI_Comm comm)
{
    int rank, nprocs, leader;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node); /* the node's lowest world rank */
    MPI_Comm_free(&node);
    int *leaders = malloc((size_t)nprocs * sizeof *leaders);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, comm);
    pl->nprocs = nprocs;
    pl->node = malloc((size_t)nprocs * sizeof *pl->node);
    int nnodes = 0;
    for (int r = 0; r < nprocs; r++) /* a leader is the first rank of its node */
        pl->node[r] = leaders[r] == r ? nnodes++ : pl->node[leaders[r]];
    free(leaders);

    pl->intra[0] = pl->intra[1] = pl->inter[0] = pl->inter[1] = -1;
    for (int a = 0; a < nprocs && pl->intra[0] < 0; a++)
        for (int b = a + 1; b < nprocs; b++)
            if (pl->node[a] == pl->node[b]) {
                pl->intra[0] = a;
                pl->intra[1] = b;
                break;
            }
    for (int b = 1; b < nprocs; b++)
        if (pl->node[b] != pl->node[0]) {
            pl->inter[0] = 0;
            pl->inter[1] = b;
            break;
        }
}

void pp_place_free(struct pp_place *pl)
{
    free(pl->node);
    pl->node = NULL;
}
