/* An application that does what a careless one may (tests/test_outputs_safe.py): it takes the
 * environment's locale (setlocale(LC_ALL, ""): a comma-decimal one makes printf write "1,5"), calls the
 * suite's own MPI_Pcontrol levels without their arguments or with a name that is not JSON, and traces
 * more stretches than a fixed table would hold, and sends with a tag MPI refuses under
 * MPI_ERRORS_RETURN (a failed call, no message).  Prints "1.5" as its locale writes it, so a test knows
 * the locale took. */
#include <locale.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    MPI_Init(&argc, &argv);
    int rank, size, stretches = argc > 1 ? atoi(argv[1]) : 300;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) printf("%.1f\n", 1.5);
    /* a send that fails (a negative tag) under MPI_ERRORS_RETURN: a call, but no message */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double y = 1;
    if (MPI_Send(&y, 1, MPI_DOUBLE, (rank + 1) % size, -5, MPI_COMM_WORLD) == MPI_SUCCESS) return 3;
    MPI_Pcontrol(2702);               /* the suite's "name the next stretch" without its text */
    MPI_Pcontrol(2702, "{not json}"); /* and with text that is no JSON */
    MPI_Pcontrol(2703);               /* "discard the trace", not the application's to say */
    MPI_Pcontrol(2701);
    double x = rank + 0.25, sum = 0;
    for (int s = 0; s < stretches; s++) {
        MPI_Pcontrol(1);
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Pcontrol(0);
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv_replace(&x, 1, MPI_DOUBLE, next, 0, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
