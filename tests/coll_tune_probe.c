/* coll_tune_probe (tests/test_coll_tune.py): which reduction algorithm the library ran, read from how it
 * called a user-defined commutative sum (calls and elements per rank over 10 MPI_Allreduce calls per
 * size, printed by rank 0 as "bytes calls/elements ..."): a deterministic signal of the selection. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static long ncalls, nelems;
static void sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    ncalls++;
    nelems += *len;
    for (int i = 0; i < *len; i++) ((double *)inout)[i] += ((double *)in)[i];
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Op op;
    MPI_Op_create(sum, 1, &op);
    for (int a = 1; a < argc; a++) {
        long bytes = atol(argv[a]), n = bytes / 8;
        double *s = calloc((size_t)n + 1, 8), *o = calloc((size_t)n + 1, 8);
        ncalls = nelems = 0;
        for (int k = 0; k < 10; k++) MPI_Allreduce(s, o, (int)n, MPI_DOUBLE, op, MPI_COMM_WORLD);
        long mine[2] = {ncalls, nelems}, *all = malloc(2 * sizeof(long) * (size_t)p);
        MPI_Gather(mine, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
        if (r == 0) {
            printf("%ld", bytes);
            for (int i = 0; i < p; i++) printf(" %ld/%ld", all[2 * i], all[2 * i + 1]);
            printf("\n");
        }
        free(s); free(o); free(all);
    }
    MPI_Op_free(&op);
    MPI_Finalize();
    return 0;
}
