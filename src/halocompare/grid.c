/* Communicators as rank -> grid-position maps, and the neighbour list. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

const char *const halo_dir_name[MAXDIR] = {"N", "S", "E", "W", "NE", "NW", "SE", "SW"};
const int halo_opp[MAXDIR] = {S, N, W, E, SW, SE, NW, NE};
static const int drow[MAXDIR] = {-1, 1, 0, 0, -1, -1, 1, 1};
static const int dcol[MAXDIR] = {0, 0, 1, -1, 1, -1, 1, -1};

const char *const halo_comm_names[NCOMM] = {"world", "dup", "evenodd", "cart", "node", "random"};

/* splitmix64: a seeded generator identical on every rank */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Grid position (as a row-major index) of this process under the node-aware
 * ordering: each node's ranks fill a compact bx x by block when every node
 * has the same number of ranks and the blocks tile the grid; otherwise nodes
 * are laid out one after another in row-major order. */
static int node_key(const struct mb_run *run, const int dims[2], char *note, size_t len)
{
    const struct mb_nodes *nd = &run->nodes;
    int nodeid = nd->node, lrank = nd->local_rank, lsize = nd->local_size, minsz, maxsz = nd->ppn;
    MPI_Allreduce(&lsize, &minsz, 1, MPI_INT, MPI_MIN, run->world);
    int b[2] = {0, 0};
    if (minsz == maxsz) {
        MPI_Dims_create(lsize, 2, b);
        if (dims[0] % b[0] || dims[1] % b[1]) { /* try the block turned */
            int t = b[0];
            b[0] = b[1];
            b[1] = t;
        }
    }
    if (b[0] && dims[0] % b[0] == 0 && dims[1] % b[1] == 0) {
        int per_row = dims[1] / b[1];
        int r = (nodeid / per_row) * b[0] + lrank / b[1], c = (nodeid % per_row) * b[1] + lrank % b[1];
        snprintf(note, len, "node: %dx%d block of the grid per node", b[0], b[1]);
        return r * dims[1] + c;
    }
    snprintf(note, len, "node: nodes in row-major order (ranks per node differ or blocks do not tile)");
    return nodeid * maxsz + lrank;
}

MPI_Comm halo_comm_create(enum comm_kind kind, const struct mb_run *run, int periodic, unsigned long seed, char *note,
                          size_t len)
{
    int rank, size, dims[2] = {0, 0}, key = 0;
    MPI_Comm c = MPI_COMM_NULL, world = run->world;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    MPI_Dims_create(size, 2, dims);
    note[0] = 0;
    switch (kind) {
    case COMM_WORLD: return MPI_COMM_WORLD;
    case COMM_DUP: MPI_Comm_dup(MPI_COMM_WORLD, &c); return c;
    case COMM_EVENODD: /* even world ranks first, then odd: neighbours far apart */
        key = rank % 2 == 0 ? rank / 2 : (size + 1) / 2 + rank / 2;
        break;
    case COMM_CART: {
        int periods[2] = {periodic, periodic}, crank, moved;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c);
        MPI_Comm_rank(c, &crank);
        int me = crank != rank;
        MPI_Allreduce(&me, &moved, 1, MPI_INT, MPI_SUM, world);
        snprintf(note, len, "%d of %d ranks", moved, size);
        return c;
    }
    case COMM_NODE: key = node_key(run, dims, note, len); break;
    case COMM_RANDOM: { /* a seeded permutation, the same on every rank */
        uint64_t s = seed;
        int *perm = malloc((size_t)size * sizeof *perm);
        for (int i = 0; i < size; i++) perm[i] = i;
        for (int i = size - 1; i > 0; i--) {
            int j = (int)(next_random(&s) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        key = perm[rank];
        free(perm);
        break;
    }
    default: break;
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &c);
    return c;
}

void halo_neighbors(struct halo *h, MPI_Comm comm, int periodic, int nnbr)
{
    h->comm = comm;
    MPI_Comm_rank(comm, &h->rank);
    MPI_Comm_size(comm, &h->size);
    h->dims[0] = h->dims[1] = 0;
    MPI_Dims_create(h->size, 2, h->dims);
    h->row = h->rank / h->dims[1];
    h->col = h->rank % h->dims[1];
    h->periodic = periodic;
    h->nnbr = nnbr;
    h->ndirs = 0;
    /* red-black for 4 neighbours, 4 colours for 8: no two neighbours share a
     * colour unless a periodic dimension is odd (phased stays correct then) */
    h->ncolours = nnbr == 4 ? 2 : 4;
    for (int d = 0; d < MAXDIR; d++) {
        h->partner[d] = MPI_PROC_NULL;
        if (d >= nnbr) continue;
        int r = h->row + drow[d], c = h->col + dcol[d];
        if (periodic) {
            r = (r + h->dims[0]) % h->dims[0];
            c = (c + h->dims[1]) % h->dims[1];
        } else if (r < 0 || r >= h->dims[0] || c < 0 || c >= h->dims[1]) {
            continue;
        }
        h->partner[d] = r * h->dims[1] + c;
        h->pcolour[d] = nnbr == 4 ? (r + c) % 2 : (r % 2) * 2 + c % 2;
        h->dirs[h->ndirs++] = d;
    }
    h->colour = nnbr == 4 ? (h->row + h->col) % 2 : (h->row % 2) * 2 + h->col % 2;
}
