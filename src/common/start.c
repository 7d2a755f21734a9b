/* The start strategies of a repetition (start.h): a barrier, or an agreed
 * instant on the synchronised clocks (--sync window). */
#include "start.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- barrier */

static void barrier_open(struct mb_start *s, struct mb_run *run, MPI_Comm comm, const double *wall)
{
    (void)s, (void)run, (void)comm, (void)wall;
}

static void barrier_wait(struct mb_start *s, MPI_Comm comm, int j)
{
    (void)s, (void)j;
    MPI_Barrier(comm);
}

static double barrier_taken(struct mb_start *s, int j, double t)
{
    (void)s, (void)j;
    return t;
}

static void barrier_share(struct mb_start *s, double *x)
{
    for (long i = 0; i < MB_START_SHARE(s->n); i++) x[i] = 0;
}

static void barrier_shared(struct mb_start *s, const double *x) { (void)s, (void)x; }

static void barrier_adapt(struct mb_start *s, const struct mb_opts *o, const int *late, long batch, long rejected)
{
    (void)s, (void)o, (void)late, (void)batch, (void)rejected;
}

/* the members' repetitions and a microsecond per member for its barrier */
static double barrier_round_time(const struct mb_start *s, const double *busy)
{
    double t = 1e-6 * s->n;
    for (int j = 0; j < s->n; j++) t += busy[j];
    return t;
}

static const struct mb_start_ops barrier = {"barrier", barrier_open, barrier_wait, barrier_taken, barrier_share,
                                            barrier_shared, barrier_adapt, barrier_round_time};

/* ---------------------------------------------------------------- window */

/* The time between window starts, from one repetition's wall time (slowest
 * rank): room for a slower repetition, the clock error and the wait. */
static double window_length(double wall) { return 1.25 * wall + 4 * mb_sync_error() + 20e-6; }

/* a fresh fit point for the clocks, the windows, and the first start: after every rank has left the allreduce */
static void window_open(struct mb_start *s, struct mb_run *run, MPI_Comm comm, const double *wall)
{
    const struct mb_opts *o = &run->opts;
    mb_sync_refresh(run);
    for (int j = 0; j < s->n; j++) s->W += s->w[j] = o->window_us > 0 ? o->window_us * 1e-6 : window_length(wall[j]);
    double now = mb_sync_now();
    MPI_Allreduce(&now, &s->first, 1, MPI_DOUBLE, MPI_MAX, comm);
    s->first += 2 * s->W + 50e-6;
    s->off = 0;
}

static void window_wait(struct mb_start *s, MPI_Comm comm, int j)
{
    (void)comm, (void)j;
    s->target = mb_sync_local(s->first + (double)s->round * s->W + s->off);
    s->late = mb_sync_clock() > s->target; /* arriving after it spoils the round */
    mb_sync_wait(s->target);
}

static double window_taken(struct mb_start *s, int j, double t)
{
    double wall = mb_sync_clock() - s->target;
    if (wall > s->slowest[j]) s->slowest[j] = wall;
    s->off += s->w[j];
    return s->late ? t + MB_LATE : t;
}

static void window_share(struct mb_start *s, double *x)
{
    x[0] = mb_sync_now();
    for (int j = 0; j < s->n; j++) x[1 + j] = s->slowest[j];
}

/* the next batch starts after every rank has left the reduction */
static void window_shared(struct mb_start *s, const double *x)
{
    s->first = x[0] + 2 * s->W + 50e-6;
    for (int j = 0; j < s->n; j++) {
        s->widest[j] = x[1 + j];
        s->slowest[j] = 0;
    }
}

/* too tight: the members that started late as long as the slowest's repetition, and more */
static void window_adapt(struct mb_start *s, const struct mb_opts *o, const int *late, long batch, long rejected)
{
    if (!(rejected > batch / 4) || o->window_us > 0) return;
    for (int j = 0; j < s->n; j++)
        if (late[j]) s->w[j] = fmax(1.5 * s->w[j], window_length(s->widest[j]));
    s->W = 0;
    for (int j = 0; j < s->n; j++) s->W += s->w[j];
}

static double window_round_time(const struct mb_start *s, const double *busy)
{
    (void)busy;
    double t = 0;
    for (int j = 0; j < s->n; j++) t += s->w[j];
    return t;
}

static const struct mb_start_ops window = {"window", window_open, window_wait, window_taken, window_share,
                                           window_shared, window_adapt, window_round_time};

/* ---------------------------------------------------------------- the interface */

struct mb_start *mb_start_open(struct mb_run *run, MPI_Comm comm, int windowed, const double *wall, int n)
{
    struct mb_start *s = calloc(1, sizeof *s);
    s->ops = windowed ? &window : &barrier;
    s->n = n;
    s->w = calloc((size_t)n, sizeof *s->w);
    s->slowest = calloc((size_t)n, sizeof *s->slowest);
    s->widest = calloc((size_t)n, sizeof *s->widest);
    s->ops->open(s, run, comm, wall);
    return s;
}

void mb_start_round(struct mb_start *s, long i)
{
    s->round = i;
    s->off = 0;
}

void mb_start_close(struct mb_start *s)
{
    free(s->w);
    free(s->slowest);
    free(s->widest);
    free(s);
}
