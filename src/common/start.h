/* How a repetition starts (--sync; docs/measurement.md): the timing loop's
 * one interface to its start strategies (start.c), for a test or a group of
 * n members measured in rounds.
 *
 *   barrier: each rank starts as it leaves a barrier over the communicator;
 *   window:  each rank starts at an instant agreed in advance on the
 *            synchronised clocks (sync.c): round i of a batch at
 *            first + i x W, each member in its own window, one after the
 *            other in the round's order (W: the sum of the windows).  A rank
 *            that arrives after its instant spoils that repetition: its time
 *            comes back MB_LATE longer and the loop drops the round; a batch
 *            that dropped more than a quarter widens the late members'
 *            windows (unless --window-us fixed them). */
#ifndef MB_START_H
#define MB_START_H
#include "internal.h"

#define MB_LATE 1e9 /* seconds added to a repetition some rank started late */

struct mb_start {
    const struct mb_start_ops *ops;
    int n;                   /* members */
    long round;              /* the batch's round now */
    double *w, *slowest;     /* window: each member's window; this rank's longest repetition of the batch */
    double *widest;          /* window: the same, the slowest rank's (after the batch's reduction) */
    double W, first, off;    /* window: a round's windows; the batch's first start; the round's so far */
    double target;           /* window: this repetition's start, on this rank's clock */
    int late;                /* window: this rank came after it */
};

struct mb_start_ops {
    const char *name; /* the rows' params: sync=NAME */
    /* before the first batch: wall[j], one repetition's wall time of member j (slowest rank); collective */
    void (*open)(struct mb_start *s, struct mb_run *run, MPI_Comm comm, const double *wall);
    void (*wait)(struct mb_start *s, MPI_Comm comm, int j); /* until member j starts, in the round now */
    double (*taken)(struct mb_start *s, int j, double t); /* j's repetition took t: what the loop keeps */
    /* its share of the batch's one reduction, MB_START_SHARE(n) doubles: before it (share) and after it */
    void (*share)(struct mb_start *s, double *x);
    void (*shared)(struct mb_start *s, const double *x);
    /* after the batch: late[j], member j started late in some round; rejected of batch rounds dropped */
    void (*adapt)(struct mb_start *s, const struct mb_opts *o, const int *late, long batch, long rejected);
    /* seconds one round takes: from busy[j], member j's time per repetition (0 before it has one) */
    double (*round_time)(const struct mb_start *s, const double *busy);
};
#define MB_START_SHARE(n) (1 + (long)(n))

/* The strategy (window or barrier) for n members, opened; mb_start_close frees it. */
struct mb_start *mb_start_open(struct mb_run *run, MPI_Comm comm, int window, const double *wall, int n);
void mb_start_round(struct mb_start *s, long i); /* round i of the batch begins */
void mb_start_close(struct mb_start *s);
#endif
