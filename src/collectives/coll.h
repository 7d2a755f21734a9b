/* collectives: shared types.  Every operation — a library collective (in
 * its blocking and nonblocking form), a user-level algorithm or a series
 * variant — is one table entry: buffer sizes, one call, the fill/check pair
 * for --verify, and optional set-up/free of what the method keeps between
 * calls.  main.c wraps an entry in the timing method (--timing osu|subtract),
 * the communicator (--comms) and the root placement (--root). */
#ifndef COLL_H
#define COLL_H
#include "mb.h"

/* Buffer sizes, in units of the message size (bytes). */
enum coll_mul { MUL_0, MUL_1, MUL_P, MUL_M /* --messages */ };

/* Bytes the whole operation moves, in units of the message size, for the
 * aggregate bandwidth (agg_mbps; docs/collectives.md, "Aggregate bandwidth").
 * P is the communicator's size; the series multiplies by m. */
enum coll_agg {
    AGG_NONE, /* barrier: no data */
    AGG_P1,   /* (P-1) n: bcast, reduce, gather, scatter, scan */
    AGG_2P1,  /* 2 (P-1) n: allreduce */
    AGG_PP1,  /* P (P-1) n: allgather, alltoall, reduce_scatter_block */
};

enum {
    COLL_ROOTED = 1u,    /* takes a root (--root applies) */
    COLL_DOUBLES = 2u,   /* a reduction on doubles: sizes must be multiples of 8 */
    COLL_SYNC = 4u,      /* a barrier: no barrier between calls, nothing to subtract */
    COLL_NOSIZE = 8u,    /* no message (barrier): one row, bytes empty */
    COLL_NB = 16u,       /* has a nonblocking form ("i" + test) */
    COLL_SEGMENTED = 32u /* cut into --segment byte pieces (the row's params say so) */
};

struct coll_state {
    MPI_Comm comm; /* the communicator under test (--comms) */
    int rank, size;
    size_t bytes;  /* message size: per-rank block for gather/scatter/allgather/alltoall/reduce_scatter_block */
    size_t count;  /* bytes / 8 (reductions) */
    char *sbuf, *rbuf;
    char *tbuf;    /* two-level: a node's partial result (bytes) */
    size_t sbytes, rbytes;
    int root;      /* root of the current (or last) call */
    int root_mode; /* 0: fixed root, 1: rotate (root = call number % size) */
    int fixed_root;
    long calls;    /* calls made so far in this test (rotate; the shm variants' double buffer) */
    size_t segment;
    long messages;                  /* the series' m */
    MPI_Request *reqs;              /* chain and tree: the send requests, two per segment */
    int *counts, *displs;           /* scatter-allgather: the chunks, by rank */
    /* Two-level algorithms: comm's node map (from the harness's mb_nodes). */
    const struct mb_nodes *nodes;   /* .comm and .leaders are private to collectives */
    const int *local_of;            /* every rank's rank within its node */
    /* The shared-memory variants: a window on the node communicator and
     * every node rank's segment in it (node rank 0's holds the shared areas). */
    MPI_Win win;
    char **shm;
    MPI_Request preq; /* persistent.c: the persistent collective's request */
    int ready;        /* buffers and set-up made (test.c): coll_teardown has something to release */
};

struct coll_op {
    const char *test;   /* CSV test name of the blocking form */
    const char *method; /* "library", "binomial", ... */
    unsigned flags;
    enum coll_mul smul, rmul;
    /* One call with root s->root; req NULL: blocking, else the nonblocking
     * form is started and *req completes it.  Returns an MPI error code. */
    int (*call)(struct coll_state *s, MPI_Request *req);
    void (*fill)(struct coll_state *s, long it);                           /* NULL: nothing to verify */
    int (*check)(struct coll_state *s, long it, char *msg, size_t len);
    enum coll_agg agg;
    /* Optional, collective over s->comm: what the method keeps between calls
     * (buffers exist already); returns NULL or why it is not available. */
    const char *(*setup)(struct coll_state *s);
    void (*cleanup)(struct coll_state *s);
};

/* The root the next call will use (fill needs it before the call). */
int coll_next_root(const struct coll_state *s);

extern const struct coll_op coll_library[];    /* library.c, ends with {0} */
extern const struct coll_op coll_algorithms[]; /* algorithms.c: bcast algorithms then the series, ends with {0} */
extern const struct coll_op coll_twolevel[];   /* twolevel.c: node-aware bcast, reduce, allreduce, ends with {0} */
extern const struct coll_op coll_persistent[]; /* persistent.c: MPI-4 persistent forms (method "persistent"), ends with {0} */

/* Verification (library.c), shared by every method of a collective.
 * Broadcast: the root's pattern over all of sbuf, every other rank's sbuf
 * poisoned; every rank checks all of sbuf.  Reductions: exact integer sums. */
void coll_bcast_fill(struct coll_state *s, long it);
int coll_bcast_check(struct coll_state *s, long it, char *msg, size_t len);
void coll_reduce_fill(struct coll_state *s, long it);
int coll_reduce_check(struct coll_state *s, long it, char *msg, size_t len);
int coll_allreduce_check(struct coll_state *s, long it, char *msg, size_t len);
void coll_gather_fill(struct coll_state *s, long it);
void coll_alltoall_fill(struct coll_state *s, long it);
int coll_allgather_check(struct coll_state *s, long it, char *msg, size_t len);
int coll_alltoall_check(struct coll_state *s, long it, char *msg, size_t len);

/* comms.c: the communicators of --comms, each with its node map. */
enum { COMM_WORLD, COMM_DUP, COMM_SPLIT, COMM_NODE, NCOMMS };
#define COLL_COMMS "world,dup,split,node"
struct coll_comm {
    const char *name; /* the CSV's comm column */
    char label[48];   /* stdout group heading: "world: 8 ranks", "split: 4+4 ranks" */
    MPI_Comm comm;    /* MPI_COMM_WORLD itself for world */
    struct mb_nodes nodes;
    int *local_of;
};
/* Opens the communicators selected in mask (bits COMM_*), in that order;
 * returns how many.  Collective over MPI_COMM_WORLD. */
int coll_comms_open(const struct mb_run *run, unsigned long mask, struct coll_comm *out);
void coll_comms_close(struct coll_comm *c, int n);

/* report.c: the stdout tables (rank 0) */
struct coll_report {
    const char *root, *timing;
    long messages;
    size_t segment;
    const struct coll_comm *comms;
    int ncomms;
    const char *const *roots;    /* the rooted rows' root parameter values ("0", "rotate", "3") */
    const char *const *rootname; /* as the user wrote them ("same", "rotate", "3") */
    int nroots;
};
void coll_report(const struct mb_run *run, const struct coll_report *info);

/* mpit.c: the library's own algorithms of a collective, as its MPI_T
 * control variable lists them (names and values; values[0] is the
 * library's own choice: "auto" / "ignore"). */
enum { COLL_ALGS_MAX = 32 };
#ifdef MB_SIMULATED
typedef void *coll_cvar_handle; /* SMPI has no MPI_T control variables */
#else
typedef MPI_T_cvar_handle coll_cvar_handle;
#endif
struct coll_algs {
    char coll[32];     /* "bcast" */
    char var[96];      /* the control variable: MPIR_CVAR_BCAST_INTRA_ALGORITHM, coll_tuned_bcast_algorithm */
    int index, open, initial;
    coll_cvar_handle handle;
    int n;
    char names[COLL_ALGS_MAX][48];
    int values[COLL_ALGS_MAX];
};
const char *coll_algs_library(void);  /* "Open MPI", "MPICH" or "" */
int coll_algs_at_creation(void);      /* 1: a write applies to communicators created after it (Open MPI) */
void coll_algs_prepare_env(void);     /* before MPI_Init: what the library needs to honour a write */
/* Fills a (collective over nothing; every rank gets the same list); NULL or why there is none. */
const char *coll_algs_find(const char *coll, struct coll_algs *a);
int coll_algs_set(const struct coll_algs *a, int value); /* an MPI error code */
int coll_algs_lookup(const struct coll_algs *a, const char *name); /* its index, or -1 */
void coll_algs_strict(int on); /* MPICH: a forced algorithm that cannot apply fails instead of falling back */
void coll_algs_free(struct coll_algs *a); /* restores the variable's value at start */
void coll_algs_end(void);
char *coll_algs_default_selection(void); /* MPICH: its compiled-in selection JSON (malloc'd), else NULL */
char *coll_library_image(long *n); /* MPICH: the loaded library's file, n bytes (malloc'd, NUL after), else NULL */

/* tuning.c: --tuning FILE checked for this library (a regular file, its structure, every algorithm one the
 * library has) and set in the environment (before MPI_Init); coll_tuning_name set; NULL or why not. */
const char *coll_tuning_use(const char *path);
extern char coll_tuning_name[64]; /* the rows' tuning=<file name> ("" without --tuning) */

/* What a run measures, resolved once from the options (main.c): the message sizes and the communicators.
 * The loops iterate it and the progress line's total is counted from it. */
struct coll_plan {
    size_t sizes[MB_MAX_SIZES];
    int nsizes;
    const struct coll_comm *comms;
    int ncomms;
};

/* One test as it is measured: its state, its operation, its form and,
 * under --algorithms, the library's algorithm forced around its calls, so
 * that members of a group each run their own. */
struct coll_kern {
    struct coll_state *s;
    const struct coll_op *op;
    int nb;
    const struct coll_algs *alg;
    int alg_value;
};

/* test.c: one test around its measurement, for main.c and algorithms_lib.c alike. */
/* Whether a test of op has a row at message size b (first: the first size, the barriers' one row). */
int coll_applies(const struct coll_op *op, size_t b, size_t first);
/* Before a test is measured: root (-1: none) inside k->s->comm, else the reason earlier (NULL: none), else
 * the buffers and the method's set-up (b bytes), every rank's agreement, and one untimed call telling
 * whether the library runs it here.  NULL: ready to measure; else why the test is n/a on every rank. */
const char *coll_prepare(const struct mb_run *run, struct coll_kern *k, size_t b, int root, const char *earlier);
void coll_teardown(struct coll_state *s, const struct coll_op *op); /* what coll_prepare set up, if anything */
double coll_agg_units(const struct mb_run *run, const struct coll_state *s, const struct coll_op *op);

/* kernels.c: the timed regions of a test. */
int coll_one_call(struct coll_kern *k);
void coll_force_alg(const struct coll_kern *k, int on); /* --algorithms: on, or the library's own choice back */
double coll_osu_timed(void *state, long iters);          /* --timing osu: each call timed alone */
/* --timing subtract: kk runs collective + barrier, paired with a barrier-only reference whose median goes to
 * *ref_median; returns 0 for a barrier itself (nothing to subtract, no reference). */
int coll_subtract(struct mb_kernel *kk, double *ref_median);
void coll_kern_fill(void *state, long it);
int coll_kern_check(void *state, long it, char *msg, size_t len);
/* The harness's kernel of k (its timing left to the caller), with the verification pair where op has one. */
struct mb_kernel coll_kernel(struct coll_kern *k, MPI_Comm comm, struct mb_sweep *sw);

/* algorithms_lib.c: --algorithms, every algorithm the library lists for
 * bcast, reduce, allreduce, allgather, alltoall and barrier, forced one at
 * a time and measured as one group per (collective, size, communicator). */
/* Checks the names of --algorithms (a list, or "library": all) against the
 * library's lists; a usage error for a name no selected collective has. */
void coll_lib_algorithms_check(struct mb_run *run, const char *arg, unsigned long tests_mask,
                               unsigned long (*bit)(const char *));
/* Measures them over the plan, root_param / root_rank the rooted ones' one --root. */
void coll_lib_algorithms(struct mb_run *run, const struct coll_plan *pl, const char *root_param, int root_rank);
#endif
