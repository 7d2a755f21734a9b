/* The pairs to measure: the first node-local pair and the first pair that
 * crosses nodes, from the harness's node of every rank. */
#include "pingpong.h"


void pp_place_init(struct pp_place *pl, const struct mb_nodes *nodes, int nprocs)
{
    pl->nprocs = nprocs;
    pl->node = nodes->node_of;
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
