/* An application choosing what the profiler's trace records (tests/test_trace.py):
 * recording from MPI_Init (MPIMB_PROF_TRACE_START=1) covers one barrier, then
 * MPI_Pcontrol(0) stops it for 5 ring exchanges, MPI_Pcontrol(1) ... (0) records
 * 2 ring exchanges with named sources and 1 with MPI_ANY_SOURCE.  A ring
 * exchange: MPI_Irecv from the left, MPI_Isend to the right, MPI_Waitall. */
#include <mpi.h>

static void ring(int rank, int size, int any)
{
    double s = rank, r = -1;
    MPI_Request q[2];
    MPI_Irecv(&r, 1, MPI_DOUBLE, any ? MPI_ANY_SOURCE : (rank + size - 1) % size, 5, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&s, 1, MPI_DOUBLE, (rank + 1) % size, 5, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(0);
    for (int i = 0; i < 5; i++) ring(rank, size, 0);
    MPI_Pcontrol(1);
    for (int i = 0; i < 2; i++) ring(rank, size, 0);
    ring(rank, size, 1);
    MPI_Pcontrol(0);
    for (int i = 0; i < 5; i++) ring(rank, size, 0);
    MPI_Finalize();
    return 0;
}
