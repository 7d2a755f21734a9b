/* The bare hand-written loops the pingpong program is checked against: no
 * harness, no function pointers, no options.  Rank 0 and 1 only.
 *
 *   bare LAT_ITERS BW_WINDOWS REPS
 *
 * latency, 8 bytes: REPS repetitions, each a barrier then LAT_ITERS round
 * trips (Send/Recv, as osu_latency); one-way time = elapsed / LAT_ITERS / 2.
 * bw, 1 MiB, window 64: REPS repetitions, each a barrier then BW_WINDOWS
 * windows of 64 Isend + Waitall + 4-byte ack (as osu_bw).
 * Prints, per test, the median, the mean and the best (minimum time) over
 * the repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) && !defined(__clang__) /* GCC 12 false positive on MPI_STATUSES_IGNORE */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

enum { WINDOW = 64, BW_BYTES = 1 << 20, LAT_BYTES = 8 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summary(const char *name, double *t, int n, double scale, const char *unit, int invert)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp);
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), mean = sum / n;
    if (invert)
        printf("%s median %.6g %s mean %.6g %s best %.6g %s\n", name, scale / med, unit, scale / mean, unit,
               scale / t[0], unit);
    else
        printf("%s median %.6g %s mean %.6g %s best %.6g %s\n", name, med * scale, unit, mean * scale, unit,
               t[0] * scale, unit);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || size != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 bare LAT_ITERS BW_WINDOWS REPS\n");
        MPI_Finalize();
        return 2;
    }
    long lat_iters = atol(argv[1]), bw_windows = atol(argv[2]);
    int reps = atoi(argv[3]), peer = 1 - rank;
    char *s = NULL, *r = NULL, ack[4] = {0};
    if (posix_memalign((void **)&s, 4096, BW_BYTES) || posix_memalign((void **)&r, 4096, BW_BYTES)) return 1;
    for (int i = 0; i < BW_BYTES; i++) s[i] = r[i] = (char)i;
    double *t = malloc((size_t)reps * sizeof *t);
    MPI_Request req[WINDOW];

    /* latency: warm-up, then repetitions */
    for (int rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0)
            for (long i = 0; i < lat_iters; i++) {
                MPI_Send(s, LAT_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(r, LAT_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        else
            for (long i = 0; i < lat_iters; i++) {
                MPI_Recv(r, LAT_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, LAT_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        if (rep >= 0) t[rep] = (MPI_Wtime() - t0) / (double)lat_iters / 2;
    }
    if (rank == 0) summary("bare latency-8B", t, reps, 1e6, "us", 0);

    /* bandwidth: warm-up, then repetitions */
    for (int rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < bw_windows; i++) {
            if (rank == 0) {
                for (int j = 0; j < WINDOW; j++) MPI_Isend(s, BW_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Recv(ack, 4, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int j = 0; j < WINDOW; j++) MPI_Irecv(r, BW_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Send(ack, 4, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
        }
        if (rep >= 0) t[rep] = (MPI_Wtime() - t0) / (double)(bw_windows * WINDOW);
    }
    if (rank == 0) summary("bare bw-1MiB", t, reps, BW_BYTES / 1e6, "MB/s", 1);
    free(t);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
