/* What recording a trace event costs (bench/README.md, "trace"): one rank
 * exchanges a message with itself (MPI_Irecv, MPI_Isend, MPI_Waitall: 5
 * events, the three calls and the two requests' completions), ITERS times
 * with recording off (MPI_Pcontrol(0): the profile's counting only) and on
 * (MPI_Pcontrol(1)), alternately for ROUNDS rounds; run under
 * libmpimb-prof.so in trace mode (bench/trace/cost).  Prints the resident
 * bytes after MPI_Init (the main thread's trace buffer is in them: the
 * profiler touches it there), then one line per round: seconds off, seconds
 * on, resident bytes grown while on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long resident(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
    if (f) fclose(f);
    return res * sysconf(_SC_PAGESIZE);
}

static double loop(long iters, int record)
{
    double s = 1, r = 0;
    MPI_Request q[2];
    MPI_Status st[2];
    MPI_Pcontrol(record);
    double t = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Irecv(&r, 1, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, &q[0]);
        MPI_Isend(&s, 1, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, &q[1]);
        MPI_Waitall(2, q, st);
    }
    t = MPI_Wtime() - t;
    MPI_Pcontrol(0);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long iters = argc > 1 ? atol(argv[1]) : 10000, rounds = argc > 2 ? atol(argv[2]) : 9;
    printf("%ld\n", resident());
    loop(iters, 0); /* warm-up */
    for (long k = 0; k < rounds; k++) {
        double off = loop(iters, 0);
        long before = resident();
        double on = loop(iters, 1);
        printf("%.9f %.9f %ld\n", off, on, resident() - before);
    }
    MPI_Finalize();
    return 0;
}
