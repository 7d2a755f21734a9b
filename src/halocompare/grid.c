/* Communicators as rank -> grid-position maps, and the neighbour map. */
#include "halo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const halo_comm_names[NCOMM] = {"world", "dup", "evenodd", "cart", "node", "random"};

const int halo_stencils[NSTENCIL] = {2, 4, 6, 8, 26};

int halo_faces(int ndims) { return 2 * ndims; }

int halo_all(int ndims)
{
    int n = 1;
    for (int i = 0; i < ndims; i++) n *= 3;
    return n - 1;
}

void halo_grid(int size, int ndims, int dims[MAXDIM])
{
    for (int i = 0; i < MAXDIM; i++) dims[i] = i < ndims ? 0 : 1;
    MPI_Dims_create(size, ndims, dims);
}

/* Row-major rank of grid coordinates c (the order MPI_Cart_create uses). */
static int grid_rank(int ndims, const int dims[], const int c[])
{
    int r = 0;
    for (int i = 0; i < ndims; i++) r = r * dims[i] + c[i];
    return r;
}

static void grid_coords(int ndims, const int dims[], int r, int c[])
{
    for (int i = ndims - 1; i >= 0; i--) {
        c[i] = r % dims[i];
        r /= dims[i];
    }
}

/* splitmix64: a seeded generator identical on every rank */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A block shape b of lsize ranks (MPI_Dims_create) that tiles the grid:
 * dims[i] % b[i] == 0 in every dimension, trying every order of b's extents. */
static int block_tiling(int ndims, const int dims[], int lsize, int b[MAXDIM])
{
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int e[MAXDIM];
    halo_grid(lsize, ndims, e);
    for (int k = 0; k < 6; k++) {
        int ok = 1;
        for (int i = 0; i < ndims && ok; i++) ok = perm[k][i] < ndims && dims[i] % e[perm[k][i]] == 0;
        if (!ok) continue;
        for (int i = 0; i < ndims; i++) b[i] = e[perm[k][i]];
        return 1;
    }
    return 0;
}

/* Grid position (as a row-major index) of this process under the node-aware
 * ordering: each node's ranks fill a compact block of the grid when every
 * node has the same number of ranks and the blocks tile the grid (nodes in
 * row-major order over the grid of blocks, ranks row-major in their block);
 * otherwise nodes are laid out one after another in row-major order. */
static int node_key(const struct mb_run *run, int ndims, const int dims[], char *note, size_t len)
{
    const struct mb_nodes *nd = &run->nodes;
    int minsz, b[MAXDIM];
    MPI_Allreduce(&nd->local_size, &minsz, 1, MPI_INT, MPI_MIN, run->world);
    if (minsz == nd->ppn && block_tiling(ndims, dims, nd->local_size, b)) {
        int blocks[MAXDIM], at[MAXDIM], in[MAXDIM], c[MAXDIM], n = 0;
        for (int i = 0; i < ndims; i++) blocks[i] = dims[i] / b[i];
        grid_coords(ndims, blocks, nd->node, at);
        grid_coords(ndims, b, nd->local_rank, in);
        for (int i = 0; i < ndims; i++) {
            c[i] = at[i] * b[i] + in[i];
            n += snprintf(note + n, len - (size_t)n, "%s%d", i ? "x" : "node: ", b[i]);
        }
        snprintf(note + n, len - (size_t)n, " block of the grid per node");
        return grid_rank(ndims, dims, c);
    }
    snprintf(note, len, "node: nodes in row-major order (ranks per node differ or blocks do not tile)");
    return nd->node * nd->ppn + nd->local_rank;
}

#ifdef MB_SIMULATED
const char *halo_sim_cart_why = HALO_SIM_CART_NA;

/* SMPI's MPI_Cart_create ignores reorder.  A platform may carry a model of
 * its machine's mapping (scripts/simulate passes it):
 * - "identity": the machine's MPI ignores reorder too (MPICH2's, under Cray's
 *   MPI on the XT), so the grid is in rank order;
 * - "fold", a model of IBM's BG/L topology mapping for a 2-D grid on a
 *   partition of PX x PY x PZ nodes with T processes each, placed XYZT or
 *   TXYZ: the grid's columns along x, its rows through the node's processes,
 *   then y and z back and forth, so that every grid neighbour is on the same
 *   node or one hop away.
 * Returns rank's position in that grid, or -1 (and the reason) where it does
 * not apply. */
static int sim_cart_key(int rank, int size, int ndims, const int dims[], const char **why)
{
    const char *model = getenv("MPIMB_SIM_CART"), *part = getenv("MPIMB_SIM_PARTITION"),
               *map = getenv("MPIMB_SIM_MAPPING"), *ppn_s = getenv("MPIMB_SIM_PPN");
    *why = HALO_SIM_CART_NA;
    if (model && !strcmp(model, "identity")) {
        *why = NULL;
        return rank;
    }
    if (!model || strcmp(model, "fold") || !part || !map || !ppn_s) return -1;
    int p[3] = {0, 0, 0}, t = atoi(ppn_s);
    if (sscanf(part, "%d,%d,%d", &p[0], &p[1], &p[2]) != 3 || t < 1) return -1;
    int nodes = p[0] * p[1] * p[2];
    *why = HALO_SIM_CART_NA ", and the platform's model of its machine's mapping (fold) covers a 2-D grid "
                            "of (partition y*z*processes per node) x (partition x) filling the partition";
    if (ndims != 2 || size != nodes * t || dims[1] != p[0] || dims[0] != p[1] * p[2] * t) return -1;
    *why = NULL;
    int xyzt = !strcmp(map, "XYZT"), n = xyzt ? rank % nodes : rank / t, me = xyzt ? rank / nodes : rank % t;
    int x = n % p[0], y = n / p[0] % p[1], z = n / (p[0] * p[1]);
    int row = z * p[1] + (z % 2 ? p[1] - 1 - y : y); /* back and forth through y, z */
    return (row * t + me) * dims[1] + x;
}
#endif

MPI_Comm halo_comm_create(enum comm_kind kind, const struct mb_run *run, int ndims, int periodic,
                          unsigned long seed, char *note, size_t len)
{
    int rank, size, dims[MAXDIM], key = 0;
    MPI_Comm c = MPI_COMM_NULL, world = run->world;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    halo_grid(size, ndims, dims);
    note[0] = 0;
    switch (kind) {
    case COMM_WORLD: return MPI_COMM_WORLD;
    case COMM_DUP: MPI_Comm_dup(MPI_COMM_WORLD, &c); return c;
    case COMM_EVENODD: /* even world ranks first, then odd: neighbours far apart */
        key = rank % 2 == 0 ? rank / 2 : (size + 1) / 2 + rank / 2;
        break;
    case COMM_CART: {
        int periods[MAXDIM] = {periodic, periodic, periodic}, crank, moved;
#ifdef MB_SIMULATED
        int skey = sim_cart_key(rank, size, ndims, dims, &halo_sim_cart_why);
        if (skey >= 0) { /* the platform's model of the machine's reorder: the same grid, ranks placed by it */
            MPI_Comm_split(MPI_COMM_WORLD, 0, skey, &c);
            MPI_Comm_rank(c, &crank);
            int me = crank != rank;
            MPI_Allreduce(&me, &moved, 1, MPI_INT, MPI_SUM, world);
            snprintf(note, len, "%d of %d ranks (simulated: the platform's model of its MPI's mapping, %s)", moved,
                     size, getenv("MPIMB_SIM_CART"));
            return c;
        }
#endif
        MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 1, &c);
        MPI_Comm_rank(c, &crank);
        int me = crank != rank;
        MPI_Allreduce(&me, &moved, 1, MPI_INT, MPI_SUM, world);
        snprintf(note, len, "%d of %d ranks", moved, size);
        return c;
    }
    case COMM_NODE: key = node_key(run, ndims, dims, note, len); break;
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

/* The directions of the stencil, in the order of struct halo: by how many
 * offsets are non-zero (faces, edges, corners), then odometer order with
 * dimension 0 most significant and each offset running -1, +1, 0 — which
 * puts the faces in a Cartesian topology's neighbour order. */
static void stencil(struct halo *h)
{
    static const int val[3] = {-1, 1, 0};
    static const char *const letters[MAXDIM] = {"WE", "NS", "UD"}; /* from the last dimension */
    int nd = h->ndims, total = 1, most = h->nnbr == halo_faces(nd) ? 1 : nd, n = 0;
    for (int i = 0; i < nd; i++) total *= 3;
    for (int nz = 1; nz <= most; nz++)
        for (int v = 0; v < total; v++) {
            int k = 0, x = v, o[MAXDIM] = {0, 0, 0};
            for (int i = nd - 1; i >= 0; i--, x /= 3) k += (o[i] = val[x % 3]) != 0;
            if (k != nz) continue;
            memcpy(h->off[n], o, sizeof o);
            char *s = h->dir_name[n];
            for (int i = 0; i < nd; i++)
                if (o[i]) *s++ = letters[nd - 1 - i][o[i] > 0];
            *s = 0;
            n++;
        }
    for (int d = 0; d < n; d++)
        for (int e = 0; e < n; e++) {
            int back = 1;
            for (int i = 0; i < nd; i++) back &= h->off[e][i] == -h->off[d][i];
            if (back) h->opp[d] = e;
        }
}

/* red-black (sum of coordinates mod 2) for the faces, 2^ndims colours (each
 * coordinate's parity) for the full stencil: no two neighbours share a
 * colour unless a periodic extent is odd (phased stays correct then) */
static int colour_of(const struct halo *h, const int c[])
{
    int col = 0;
    for (int i = 0; i < h->ndims; i++) col = h->ncolours == 2 ? (col + c[i]) % 2 : col * 2 + c[i] % 2;
    return col;
}

void halo_neighbors(struct halo *h, MPI_Comm comm, int ndims, int periodic, int nnbr)
{
    h->comm = comm;
    MPI_Comm_rank(comm, &h->rank);
    MPI_Comm_size(comm, &h->size);
    h->ndims = ndims;
    halo_grid(h->size, ndims, h->dims);
    grid_coords(ndims, h->dims, h->rank, h->coord);
    h->periodic = periodic;
    h->nnbr = nnbr;
    h->ndirs = 0;
    h->ncolours = nnbr == halo_faces(ndims) ? 2 : 1 << ndims;
    stencil(h);
    for (int d = 0; d < MAXDIR; d++) {
        h->partner[d] = MPI_PROC_NULL;
        if (d >= nnbr) continue;
        int c[MAXDIM], inside = 1;
        for (int i = 0; i < ndims; i++) {
            c[i] = h->coord[i] + h->off[d][i];
            if (periodic)
                c[i] = (c[i] + h->dims[i]) % h->dims[i];
            else
                inside &= c[i] >= 0 && c[i] < h->dims[i];
        }
        if (!inside) continue;
        h->partner[d] = grid_rank(ndims, h->dims, c);
        h->pcolour[d] = colour_of(h, c);
        h->dirs[h->ndirs++] = d;
    }
    h->colour = colour_of(h, h->coord);
}
