/* Synchronised clocks for --sync window (docs/measurement.md).
 *
 * Every rank learns a model of a global clock — rank 0's MPI_Wtime — as
 * global = local + offset + slope (local - t_fit), following HCA3 (Hunold
 * and Carpen-Amarie, "Hierarchical Clock Synchronization in MPI", IEEE
 * Cluster 2018): ranks form a binomial tree over the world ranks, and each
 * rank measures its offset against its parent's *already synchronised*
 * clock, so no models have to be composed and the whole tree is done in
 * log2(P) steps.  One offset measurement is a series of round trips, each
 * of which bounds the offset from both sides (the reply was stamped after
 * the request left and before the reply came back); the tightest bounds
 * are intersected and their midpoint taken (the bounds idea of SKaMPI's
 * and Jones and Koenig's ping-pong offset measurements).
 *
 * Drift: each window-started test first adds one fit point (a fresh offset
 * against the parent); once the points show a drift larger than their own
 * uncertainty, the slope is their least-squares fit, so a long run corrects
 * drift and a short one, where it cannot be seen, does not guess it.  After
 * each test a
 * check round measures the offset every rank's global clock still has to
 * rank 0's (offsets add up along the tree's paths): that is the sync error
 * a row reports.
 *
 * MPIMB_FAULT=clock:OFFSET[:DRIFT] (tests, fault.c): world rank r's clock
 * reads r * (OFFSET + DRIFT * t) seconds more than MPI_Wtime's t, so that on
 * a simulated platform, where MPI_Wtime is one global clock, the algorithm
 * still has offsets and drifts to find. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Round trips per offset: the tightest of 16 filters a real machine's noise.
 * A simulated platform has none (every round trip bounds the offset alike)
 * and each one costs 1024 ranks' messages of real time: 2 there. */
#ifdef MB_SIMULATED
enum { EXCHANGES = 2 };
#else
enum { EXCHANGES = 16 };
#endif
enum { FITS = 32, TAG = 7717 };
static struct {
    int on, global; /* clocks synchronised; MPI_WTIME_IS_GLOBAL says they already are */
    double offset, slope, t_fit;
    double fx[FITS], fy[FITS], fh[FITS]; /* fit points: local time, offset to the parent, half-width */
    int nfit;
    double fault_offset, fault_drift; /* the clock fault's (fault.c), times the world rank */
    double error, resolution, first_error, worst_error, barrier_skew;
    long window_rows, barrier_rows, rejected;
} S;

double mb_sync_clock(void)
{
    double t = MPI_Wtime();
    return t + S.fault_offset + S.fault_drift * t;
}
double mb_sync_global(double local) { return local + S.offset + S.slope * (local - S.t_fit); }
double mb_sync_local(double global) { return (global - S.offset + S.slope * S.t_fit) / (1 + S.slope); }
double mb_sync_now(void) { return mb_sync_global(mb_sync_clock()); }
int mb_sync_ready(void) { return S.on; }
double mb_sync_error(void) { return S.error; }
double mb_sync_resolution(void) { return S.resolution; }

/* Waits until mb_sync_clock() reaches target.  Simulated (SMPI) time only
 * moves in MPI calls and sleeps, so there the wait is a simulated sleep. */
void mb_sync_wait(double target)
{
#ifdef MB_SIMULATED
    for (double d; (d = target - mb_sync_clock()) > 0;) {
        long ns = (long)((d - floor(d)) * 1e9) + 1; /* rounding up: never short of the target */
        struct timespec ts = {(time_t)d + ns / 1000000000, ns % 1000000000};
        nanosleep(&ts, NULL);
    }
#else
    while (mb_sync_clock() < target) {
    }
#endif
}

/* The binomial tree of HCA3 over P ranks: with M the largest power of two
 * not above P, a rank below M hangs off itself without its lowest set bit,
 * a rank from M on off rank - M (served last). */
static int parent(int r, int M) { return r >= M ? r - M : r - (r & -r); }

static int children(int r, int P, int M, int *out)
{
    int n = 0;
    for (int h = M / 2; h >= 1; h /= 2) /* larger subtrees first, as HCA3's rounds */
        if (r % (2 * h) == 0 && r + h < M) out[n++] = r + h;
    if (r < P - M) out[n++] = r + M;
    return n;
}

/* The reference's side of one measurement: stamps each request with its
 * global clock; the last reply also carries `carry` (the check's: the
 * reference's own offset to rank 0 and the half-widths along its path). */
static void serve(MPI_Comm comm, int child, const double carry[2])
{
    for (int e = 0; e < EXCHANGES; e++) {
        double b[3];
        MPI_Recv(b, 3, MPI_DOUBLE, child, TAG, comm, MPI_STATUS_IGNORE);
        b[0] = mb_sync_now();
        b[1] = carry[0];
        b[2] = carry[1];
        MPI_Send(b, 3, MPI_DOUBLE, child, TAG, comm);
    }
}

/* The child's side: bounds on (reference's global clock - own clock) where
 * own is the raw clock (global = 0) or the synchronised one (global = 1).
 * Returns the midpoint; *half is the half-width, *at the own clock's time. */
static double measure(MPI_Comm comm, int ref, int global, double *half, double *at, double carry[2])
{
    double lo = -INFINITY, hi = INFINITY, a = 0, c = 0;
    for (int e = 0; e < EXCHANGES; e++) {
        double b[3] = {0, 0, 0}; /* the request as long as the reply: the midpoint is biased by their difference */
        a = mb_sync_clock();
        MPI_Send(b, 3, MPI_DOUBLE, ref, TAG, comm);
        MPI_Recv(b, 3, MPI_DOUBLE, ref, TAG, comm, MPI_STATUS_IGNORE);
        c = mb_sync_clock();
        double da = global ? mb_sync_global(a) : a, dc = global ? mb_sync_global(c) : c;
        if (b[0] - dc > lo) lo = b[0] - dc; /* the stamp came before the reply arrived */
        if (b[0] - da < hi) hi = b[0] - da; /* and after the request left */
        carry[0] = b[1], carry[1] = b[2];
    }
    *half = fabs(hi - lo) / 2;
    *at = 0.5 * (a + c);
    return 0.5 * (lo + hi);
}

/* The model from the fit points: the newest offset, and the least-squares
 * slope where the drift it shows over the points' span is larger than the
 * points' own uncertainty (each offset is known to within its half-width). */
static void fit(void)
{
    int n = S.nfit < FITS ? S.nfit : FITS, last = (S.nfit - 1) % FITS;
    double mx = 0, my = 0, sxx = 0, sxy = 0, lo = INFINITY, hi = -INFINITY, half = 0;
    S.t_fit = S.fx[last];
    S.offset = S.fy[last];
    S.slope = 0;
    if (n < 2) return;
    for (int i = 0; i < n; i++) {
        mx += S.fx[i] / n, my += S.fy[i] / n;
        lo = fmin(lo, S.fx[i]), hi = fmax(hi, S.fx[i]), half = fmax(half, S.fh[i]);
    }
    for (int i = 0; i < n; i++) sxx += (S.fx[i] - mx) * (S.fx[i] - mx), sxy += (S.fx[i] - mx) * (S.fy[i] - my);
    double slope = sxx > 0 ? sxy / sxx : 0;
    if (fabs(slope) * (hi - lo) > 4 * half) S.slope = slope;
}

/* One pass down the tree: every rank but 0 takes a new fit point against
 * its parent, then serves its children with its new clock. */
static void sync_pass(MPI_Comm comm, int rank, int P)
{
    int M = 1, kids[64];
    while (2 * M <= P) M *= 2;
    if (rank != 0 && !S.global) {
        double half, at, carry[2];
        double off = measure(comm, parent(rank, M), 0, &half, &at, carry);
        S.fx[S.nfit % FITS] = at;
        S.fy[S.nfit % FITS] = off;
        S.fh[S.nfit % FITS] = half;
        S.nfit++;
        fit();
    }
    if (S.global) return;
    int nk = children(rank, P, M, kids);
    for (int i = 0; i < nk; i++) serve(comm, kids[i], (const double[2]){0, 0});
}

/* The check round: each rank's offset to rank 0 is the sum of the measured
 * offsets along its tree path, known to within the sum of their
 * half-widths.  The error is the largest such offset, the resolution the
 * largest such sum: every aligned clock is within error + resolution of
 * rank 0's (so any two within twice that). */
double mb_sync_check(struct mb_run *run)
{
    int P = run->nprocs, M = 1, kids[64];
    while (2 * M <= P) M *= 2;
    double path[2] = {0, 0}; /* this rank's offset to rank 0 and its uncertainty */
    if (run->rank != 0) {
        double at, half, carry[2];
        path[0] = measure(run->world, parent(run->rank, M), 1, &half, &at, carry) + carry[0];
        path[1] = half + carry[1];
    }
    int nk = children(run->rank, P, M, kids);
    for (int i = 0; i < nk; i++) serve(run->world, kids[i], path);
    double in[2] = {fabs(path[0]), path[1]}, out[2];
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, run->world);
    S.error = out[0];
    S.resolution = out[1];
    if (S.error > S.worst_error) S.worst_error = S.error;
    return S.error;
}

/* Exit skew of MPI_Barrier on synchronised clocks: the spread of the
 * instants ranks leave it, median over a few barriers (diagnostic, JSON).
 * Three in simulation, where every barrier exits alike and each one of
 * 1024 ranks on a torus costs half a second of real time. */
#ifdef MB_SIMULATED
enum { SKEW_BARRIERS = 3 };
#else
enum { SKEW_BARRIERS = 21 };
#endif
static void barrier_skew(struct mb_run *run)
{
    enum { N = SKEW_BARRIERS };
    double x[2 * N], y[2 * N];
    for (int i = 0; i < N; i++) {
        MPI_Barrier(run->world);
        x[i] = mb_sync_now();
        x[N + i] = -x[i];
    }
    MPI_Allreduce(x, y, 2 * N, MPI_DOUBLE, MPI_MAX, run->world);
    for (int i = 0; i < N; i++) y[i] += y[N + i]; /* latest - earliest */
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && y[j] < y[j - 1]; j--) {
            double t = y[j];
            y[j] = y[j - 1];
            y[j - 1] = t;
        }
    S.barrier_skew = y[N / 2];
}

void mb_sync_start(struct mb_run *run)
{
    int *flag = NULL, found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag, &found);
    mb_fault_clock(&S.fault_offset, &S.fault_drift);
    S.global = found && flag && *flag && !S.fault_offset && !S.fault_drift; /* the same on every rank */
    S.fault_offset *= run->rank;
    S.fault_drift *= run->rank;
    S.on = 1;
    sync_pass(run->world, run->rank, run->nprocs);
    S.first_error = mb_sync_check(run);
    barrier_skew(run);
}

void mb_sync_refresh(struct mb_run *run) { sync_pass(run->world, run->rank, run->nprocs); }

int mb_sync_window(const struct mb_run *run, double rep)
{
    if (!S.on || run->opts.sync == MB_SYNC_BARRIER) return 0;
    return run->opts.sync == MB_SYNC_WINDOW || S.error <= MB_SYNC_FRACTION * rep;
}

void mb_sync_count(int window, long rejected)
{
    if (window) {
        S.window_rows++;
        S.rejected += rejected;
    } else {
        S.barrier_rows++;
    }
}

void mb_sync_meta(FILE *f, const struct mb_run *run)
{
    const enum mb_sync m = run->opts.sync;
    const int autom = m == MB_SYNC_AUTO && (run->prog->flags & MB_WINDOW_BY_DEFAULT);
    fprintf(f, ",\n  \"sync\": {\"mode\": \"%s\", \"rule\": ",
            autom ? "auto" : m == MB_SYNC_WINDOW ? "window" : "barrier");
    if (autom)
        fprintf(f, "\"window where the clock error is at most %g of a repetition, else barrier\"", MB_SYNC_FRACTION);
    else
        fputs("null", f);
    fprintf(f, ", \"window_rows\": %ld, \"barrier_rows\": %ld, \"reps_rejected\": %ld, \"clocks_synchronised\": %s",
            S.window_rows, S.barrier_rows, S.rejected, S.on ? "true" : "false");
    if (S.on)
        fprintf(f, ", \"algorithm\": \"HCA3 tree (Hunold and Carpen-Amarie 2018), %d round trips per offset, "
                   "drift fitted once it exceeds the offsets' uncertainty\", \"wtime_is_global\": %s, "
                   "\"startup_error_s\": %.9g, "
                   "\"last_error_s\": %.9g, \"worst_error_s\": %.9g, \"check_resolution_s\": %.9g, "
                   "\"barrier_exit_skew_s\": %.9g",
                EXCHANGES, S.global ? "true" : "false", S.first_error, S.error, S.worst_error,
                S.resolution, S.barrier_skew);
    fputs("}", f);
}
