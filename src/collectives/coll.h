/* collectives: shared types.  Every operation — a library collective (in
 * its blocking and nonblocking form), a user-level broadcast algorithm or a
 * series variant — is one table entry: buffer sizes, one call, and the
 * fill/check pair for --verify.  main.c wraps an entry in the timing method
 * (--timing osu|subtract) and the root placement (--root). */
#ifndef COLL_H
#define COLL_H
#include "mb.h"

/* Buffer sizes, in units of the message size (bytes). */
enum coll_mul { MUL_0, MUL_1, MUL_P, MUL_M /* --messages */ };

enum {
    COLL_ROOTED = 1u,    /* takes a root (--root applies) */
    COLL_DOUBLES = 2u,   /* a reduction on doubles: sizes must be multiples of 8 */
    COLL_SYNC = 4u,      /* a barrier: no barrier between calls, nothing to subtract */
    COLL_NOSIZE = 8u,    /* no message (barrier): one row, bytes empty */
    COLL_NB = 16u,       /* has a nonblocking form ("i" + test) */
};

struct coll_state {
    MPI_Comm comm;
    int rank, size;
    size_t bytes;  /* message size: per-rank block for gather/scatter/allgather/alltoall/reduce_scatter_block */
    size_t count;  /* bytes / 8 (reductions) */
    char *sbuf, *rbuf;
    size_t sbytes, rbytes;
    int root;      /* root of the current (or last) call */
    int root_mode; /* 0: fixed root, 1: rotate (root = call number % size) */
    int fixed_root;
    long calls;    /* calls made so far in this test (rotate) */
    size_t segment;
    long messages;                  /* the series' m */
    MPI_Request *reqs;              /* chain: one send request per segment */
    int *counts, *displs;           /* scatter-allgather: the chunks, by rank */
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
};

/* The root the next call will use (fill needs it before the call). */
int coll_next_root(const struct coll_state *s);

extern const struct coll_op coll_library[];    /* library.c, ends with {0} */
extern const struct coll_op coll_algorithms[]; /* algorithms.c: bcast algorithms then the series, ends with {0} */

/* Broadcast-style verification (library.c): the root's pattern over all of
 * sbuf, every other rank's sbuf poisoned; every rank checks all of sbuf. */
void coll_bcast_fill(struct coll_state *s, long it);
int coll_bcast_check(struct coll_state *s, long it, char *msg, size_t len);

/* report.c: the stdout tables (rank 0) */
struct coll_report {
    const char *root, *timing;
    long messages;
    size_t segment;
};
void coll_report(const struct mb_run *run, const struct coll_report *info);
#endif
