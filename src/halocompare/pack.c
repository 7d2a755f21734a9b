/* --tests pack (--layout array, docs/halo-array.md): what packing costs on
 * its own, beside the copy rate the machine reaches for the same bytes.
 * Per stencil and size, three rows measured together (paired): pack (the
 * copy loops the pack packing runs), mpi-pack (MPI_Pack / MPI_Unpack) and
 * memcpy (the same bytes, in the same pieces, copied contiguously).  Each
 * iteration packs every region of the stencil into its buffer and unpacks
 * it into the ghost cells once; MB/s = 10^6 bytes of those regions / time
 * (every process at once, the slowest rank's time, as the halo rows). */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

static const char *const how_names[] = {"pack", "mpi-pack", "memcpy"};
static const int how_of[] = {PACK_HAND, PACK_MPI, NPACK};

struct pack_call {
    struct halo_array *a;
    int how;
};

static void pack_run(void *state, long iters)
{
    struct pack_call *c = state;
    for (long it = 0; it < iters; it++) halo_array_pack_only(c->a, c->how, MPI_COMM_WORLD);
}

void halo_pack_tests(struct mb_run *run, int nd, const int *nbrs, int nnbrs, const long *counts, int nsizes,
                     const long *extents, double *mem)
{
    enum { N = sizeof how_names / sizeof *how_names };
    for (int nb = 0; nb < nnbrs; nb++)
        for (int s = 0; s < nsizes; s++) {
            struct halo h = {0};
            int n[MAXDIM];
            halo_neighbors(&h, MPI_COMM_WORLD, nd, 1, nbrs[nb]);
            halo_array_extents(nd, counts[s], extents, n);
            struct halo_array *a = halo_array_new(&h, n, mem);
            struct pack_call c[N];
            struct mb_kernel k[N];
            struct mb_row rows[N];
            for (int j = 0; j < N; j++) {
                /* after the halo tests in the fixed order: depth 0 past both periodicities */
                int path[MB_ORDER_DEPTH] = {2, 0, nb, s, j};
                memcpy(run->order_path, path, sizeof path);
                mb_row_init(&rows[j], "pack", how_names[j]);
                snprintf(rows[j].comm, sizeof rows[j].comm, "world");
                rows[j].neighbors = nbrs[nb];
                rows[j].periodic = -1;
                rows[j].threads = 1;
                rows[j].bytes = (long long)halo_array_face(a) * 8;
                rows[j].sent_bytes = (double)halo_array_all(a) * 8;
                mb_param_opt(run, &rows[j], "dims");
                mb_param_opt(run, &rows[j], "layout");
                if (extents) mb_param_opt(run, &rows[j], "extents");
                memcpy(rows[j].order, path, sizeof path);
                mb_begin(run, &rows[j]);
                c[j] = (struct pack_call){a, how_of[j]};
                k[j] = (struct mb_kernel){.state = &c[j], .comm = MPI_COMM_WORLD, .run = pack_run};
            }
            mb_measure_group(run, k, rows, N);
            for (int j = 0; j < N; j++) mb_end(run, &rows[j]);
            halo_array_free(a);
        }
}
