/* halocompare: shared types.  A communicator is a map from its ranks to
 * positions in a 2-D grid (row-major in the communicator's rank); one
 * function turns (comm, dims, periodic, 4|8) into the neighbour list that
 * every method uses.  A method is a table entry: setup / run / teardown. */
#ifndef HALO_H
#define HALO_H
#include "mb.h"

enum { MAXDIR = 8 };
enum dir { N, S, E, W, NE, NW, SE, SW };
extern const char *const halo_dir_name[MAXDIR];
extern const int halo_opp[MAXDIR]; /* the direction pointing back */

struct halo {
    MPI_Comm comm;
    const char *comm_name;
    int rank, size, dims[2], row, col, periodic, nnbr;
    int partner[MAXDIR]; /* comm rank, MPI_PROC_NULL past a non-periodic edge */
    int dirs[MAXDIR];    /* directions that have a partner, ndirs of them */
    int ndirs;
    int colour, ncolours, pcolour[MAXDIR]; /* phased: my colour and each partner's */
    int count;                             /* doubles per message */
    double *sbuf[MAXDIR], *rbuf[MAXDIR];   /* by direction; a method may repoint rbuf */
    MPI_Request req[2 * MAXDIR];
    void *priv; /* the method's own state */
    int win_flavor;      /* RMA: HALO_WIN_CREATE or HALO_WIN_ALLOCATE (--win) */
    unsigned rma_assert; /* RMA: HALO_ASSERT_* bits (--assert) */
};

enum { HALO_WIN_CREATE, HALO_WIN_ALLOCATE };
enum { HALO_ASSERT_NOPRECEDE = 1, HALO_ASSERT_NOSUCCEED = 2, HALO_ASSERT_NOCHECK = 4 };

/* Message conventions (all methods): the message for direction d is sent to
 * partner[d] with tag d; rbuf[d] receives from partner[d] with tag
 * halo_opp[d].  Distinct tags keep a partner that is ours twice (2x2
 * periodic) or ourselves (periodic dimension of 1) apart. */

struct halo_method {
    const char *name;
    const char *(*setup)(struct halo *); /* NULL, or why the method is n/a here */
    void (*run)(struct halo *, long iters);
    void (*teardown)(struct halo *);
};

extern const struct halo_method halo_p2p_methods[];      /* p2p.c, ends with {0} */
extern const struct halo_method halo_unsafe_methods[];   /* p2p.c: send-recv-naive, needs --unsafe */
extern const struct halo_method halo_rma_methods[];      /* rma.c */
extern const struct halo_method halo_neighbor_methods[]; /* neighbor.c */

/* grid.c */
enum comm_kind { COMM_WORLD, COMM_DUP, COMM_EVENODD, COMM_CART, COMM_NODE, COMM_RANDOM, NCOMM };
extern const char *const halo_comm_names[NCOMM];
/* Creates communicator `kind` (collective over world); *note gets a remark
 * for the table footer or metadata (e.g. whether cart reordered). */
MPI_Comm halo_comm_create(enum comm_kind kind, const struct mb_run *run, int periodic, unsigned long seed, char *note,
                          size_t len);
void halo_neighbors(struct halo *h, MPI_Comm comm, int periodic, int nnbr);

/* report.c: the talk-shaped tables (rank 0) */
/* rma_note: the RMA settings (window flavour, assertions), printed under
 * the one-sided table. */
void halo_report(const struct mb_run *run, const char *cart_note[2], const char *rma_note);
#endif
