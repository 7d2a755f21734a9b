/* A bare hand-written halo exchange: the yardstick for halocompare's
 * irecv-isend on the same grid (2-D, 4 neighbours, periodic).  No harness:
 * barrier, K exchanges, max over ranks, repeated; prints the median MB/s. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int count = argc > 1 ? atoi(argv[1]) : 2000, K = argc > 2 ? atoi(argv[2]) : 200, R = argc > 3 ? atoi(argv[3]) : 51;
    int rank, size, dims[2] = {0, 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int row = rank / dims[1], col = rank % dims[1];
    /* N, S, E, W on the periodic mesh; tag = direction of travel */
    int nbr[4] = {((row - 1 + dims[0]) % dims[0]) * dims[1] + col, ((row + 1) % dims[0]) * dims[1] + col,
                  row * dims[1] + (col + 1) % dims[1], row * dims[1] + (col - 1 + dims[1]) % dims[1]};
    const int opp[4] = {1, 0, 3, 2};
    /* page-aligned like halocompare's buffers: alignment changes copy speed */
    double *sbuf[4], *rbuf[4];
    for (int d = 0; d < 4; d++) {
        if (posix_memalign((void **)&sbuf[d], 4096, (size_t)count * sizeof(double)) ||
            posix_memalign((void **)&rbuf[d], 4096, (size_t)count * sizeof(double)))
            return 1;
        for (int i = 0; i < count; i++) sbuf[d][i] = rbuf[d][i] = 0;
    }
    double *t = malloc((size_t)R * sizeof *t);
    MPI_Request req[8];
    for (int r = -1; r < R; r++) { /* r = -1 warms up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < K; k++) {
            for (int d = 0; d < 4; d++) MPI_Irecv(rbuf[d], count, MPI_DOUBLE, nbr[d], opp[d], MPI_COMM_WORLD, &req[d]);
            for (int d = 0; d < 4; d++) MPI_Isend(sbuf[d], count, MPI_DOUBLE, nbr[d], d, MPI_COMM_WORLD, &req[4 + d]);
            MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        }
        double local = (MPI_Wtime() - t0) / K, slowest;
        MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) t[r] = slowest;
    }
    qsort(t, (size_t)R, sizeof *t, cmp);
    if (rank == 0) printf("bare irecv-isend: %.1f MB/s (median of %d reps of %d)\n", 4.0 * count * 8 / t[R / 2] / 1e6, R, K);
    MPI_Finalize();
    return 0;
}
