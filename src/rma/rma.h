/* rma: shared types.  A test is composed from three tables — an operation
 * (ops.c), a synchronisation mode (sync.c) and a window flavour
 * (windows.c) — plus the latency/bandwidth shape: one operation per epoch,
 * or W operations per epoch.  No code is written per combination. */
#ifndef RMA_H
#define RMA_H
#include "mb.h"

enum role { ROLE_IDLE, ROLE_ORIGIN, ROLE_TARGET };

/* Everything a kernel needs; one instance for the whole run. */
struct rma {
    MPI_Comm comm; /* private dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN */
    int rank, nprocs;
    enum role role;
    int target;         /* world rank of the target */
    int norigins, oidx; /* number of origins; my index among them (-1 if not an origin) */
    int *origins;       /* world ranks of the origins */
    int nslots;         /* W: operations per epoch in bandwidth tests */
    size_t region;      /* bytes of target memory per origin (nslots * largest size) */

    /* the current window (windows.c); main keeps one per flavour */
    struct rma_win {
        const struct rma_window *wf;
        MPI_Win win;
        MPI_Comm wcomm;                   /* the window's communicator (world dup, or the node for shared) */
        int wtarget;                      /* the target's rank in wcomm */
        MPI_Group origin_grp, target_grp; /* PSCW groups, in wcomm ranks */
        char *tmem;                       /* target: its window memory (all regions) */
        char *tremote;                    /* origin, shared window: my region in the target's segment */
        MPI_Aint tdisp;                   /* origin: displacement of my region (dynamic: an address) */
        char *own;                        /* memory to free at teardown (create, dynamic) */
        char na[200];                     /* why this flavour is not available, or "" */
    } w;

    /* origin buffers (nslots * largest size each) */
    char *src, *res, *cmp;
    char *p2p;            /* target: receive buffer of the send/recv reference (one region per origin) */
    MPI_Request *reqs;    /* nslots * norigins + norigins */
    MPI_Status *stats;    /* as many */

    /* the current test */
    const struct rma_op *op;
    const struct rma_sync *sync;
    size_t bytes; /* per operation */
    int nops;     /* per epoch: 1 (latency) or nslots (bw) */
    int err;      /* first MPI error code seen by the origin/target in this test */
};

/* An operation: issue() starts operation j of an epoch (slot j of my region). */
struct rma_op {
    const char *name;
    int fixed;       /* 1: one 8-byte integer whatever the sweep size (fetch_and_op, compare_and_swap) */
    size_t elem;     /* bytes of one element: sizes must be a multiple of it */
    int (*issue)(struct rma *, int j);
    void (*load_store)(struct rma *, int j); /* the same through direct access (shared windows) */
    void (*fill)(struct rma *, long it);
    /* 0, or 1 with msg filled; called after completion is guaranteed */
    int (*check)(struct rma *, long it, char *msg, size_t len);
};
extern const struct rma_op rma_ops[]; /* ends with {0} */

/* A synchronisation mode, for the origin and the target side of an epoch.
 * open/close bracket a whole run of iterations (lock_all ... unlock_all);
 * begin/end bracket one epoch (lock ... unlock, start ... complete). */
struct rma_sync {
    const char *name;
    int passive;      /* target memory is read/written locally under a lock */
    int shared_only;  /* only on shared-memory windows (load-store) */
    int (*open)(struct rma *);
    int (*begin)(struct rma *);
    int (*end)(struct rma *);
    int (*close)(struct rma *);
    int (*finish)(struct rma *); /* once after a test, outside the timed region */
};
extern const struct rma_sync rma_syncs[]; /* ends with {0} */

/* A window flavour.  create() is collective over the run's communicator
 * and returns NULL or why it is not available. */
struct rma_window {
    const char *name;
    int shared; /* MPI_Win_allocate_shared: direct load/store possible */
    const char *(*create)(struct rma *, char *why, size_t len);
    void (*destroy)(struct rma *);
};
extern const struct rma_window rma_windows[]; /* ends with {0} */

/* ops.c: zeroes the target regions and sets benign origin values (collective). */
void rma_prepare(struct rma *r);

/* sync.c: iters epochs (the timed region); returns local seconds, the
 * mode's open/close (opening fence, lock_all/unlock_all) not included. */
double rma_run_timed(void *state, long iters);

/* sendrecv.c: the reference figures */
double rma_sendrecv_latency(void *state, long iters);
void rma_sendrecv_bw(void *state, long iters);
void rma_sendrecv_fill(void *state, long it);
int rma_sendrecv_check(void *state, long it, char *msg, size_t len);

/* report.c (rank 0) */
void rma_report(const struct mb_run *run, const struct rma *r, int pairs_many);

/* quirks.c: NULL, or why this combination must not be run with this library */
const char *rma_quirk(const struct rma *r);

/* utilities */
const char *rma_errstr(int code, char *buf, size_t len);
#endif
