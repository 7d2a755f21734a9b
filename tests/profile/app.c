/* A tiny MPI application for the profiler's tests (tests/test_profile.py):
 * collective calls that are right or deliberately wrong, for the checker
 * (MPIMB_PROF_CHECK=1), and a job to kill.
 *   app ok     every collective the checker compares, used correctly
 *   app root   MPI_Bcast with root 0 on rank 0 and root 1 elsewhere
 *                   (without the checker: a hang or a wrong result)
 *   app count  MPI_Allreduce of 2 ints on the last rank, 1 elsewhere
 *   app type   MPI_Allreduce of MPI_INT on rank 0, MPI_FLOAT elsewhere
 *   app v      MPI_Alltoallv where rank 0 expects one int more from rank 1 than it sends
 *   app hold   every rank writes its pid to hold-<rank>.pid, then allreduces for up to 120 s
 *              (the test kills one rank meanwhile) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ok(int rank, int size)
{
    int x = rank, y = 0, *a = calloc(4 * (size_t)size, sizeof *a), *b = calloc(4 * (size_t)size, sizeof *b);
    int *counts = calloc(3 * (size_t)size, sizeof *counts), *displs = counts + size, *pairs = displs + size;
    for (int i = 0; i < size; i++) counts[i] = 1 + i % 2, displs[i] = 2 * i, pairs[i] = 1 + (i + rank) % 2;
    MPI_Bcast(&x, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(&x, 1, MPI_INT, a, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(b, counts[rank], MPI_INT, a, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(a, counts, displs, MPI_INT, b, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(b, counts[rank], MPI_INT, a, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(a, pairs, displs, MPI_INT, b, pairs, displs, MPI_INT, MPI_COMM_WORLD); /* i sends j what j expects */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair); /* 1 pair matches 2 ints: same type signature */
    MPI_Type_commit(&pair);
    MPI_Bcast(a, rank ? 2 : 1, rank ? MPI_INT : pair, 0, MPI_COMM_WORLD);
    MPI_Type_free(&pair);
    MPI_Request r;
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Barrier(half);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    free(a), free(b), free(counts);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x[2] = {1, 2}, y[2];
    float f = 1, g;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "ok";
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "ok"))
        ok(rank, size);
    else if (!strcmp(mode, "root"))
        MPI_Bcast(x, 2, MPI_INT, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
    else if (!strcmp(mode, "count"))
        MPI_Allreduce(x, y, rank == size - 1 ? 2 : 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(mode, "type"))
        rank ? MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)
             : MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(mode, "v")) {
        int *c = calloc(2 * (size_t)size, sizeof *c), *d = c + size, *s = calloc(64, sizeof *s), *t = calloc(64, sizeof *t);
        for (int i = 0; i < size; i++) c[i] = 1, d[i] = i;
        int *rc = malloc((size_t)size * sizeof *rc);
        memcpy(rc, c, (size_t)size * sizeof *rc);
        if (rank == 0 && size > 1) rc[1] = 2;
        MPI_Alltoallv(s, c, d, MPI_INT, t, rc, d, MPI_INT, MPI_COMM_WORLD);
        free(c), free(s), free(t), free(rc);
    } else if (!strcmp(mode, "hold")) {
        char name[64];
        snprintf(name, sizeof name, "hold-%d.pid", rank);
        FILE *f = fopen(name, "w");
        if (f) fprintf(f, "%d\n", (int)getpid()), fclose(f);
        for (int i = 0; i < 12000; i++) {
            MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            usleep(10000);
        }
    } else {
        if (rank == 0) fprintf(stderr, "app: unknown mode '%s'\n", mode);
        MPI_Finalize();
        return 2;
    }
    MPI_Finalize();
    return 0;
}
