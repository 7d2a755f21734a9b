/* halocompare: shared types.  A communicator is a map from its ranks to
 * positions in a 1-, 2- or 3-D grid (row-major in the communicator's rank);
 * one function turns (comm, ndims, periodic, stencil) into the directions
 * and the neighbour list that every method uses.  A method is a table entry:
 * setup / run / teardown. */
#ifndef HALO_H
#define HALO_H
#include "mb.h"

enum { MAXDIM = 3, MAXDIR = 26 }; /* 3-D: 6 faces + 12 edges + 8 corners */

struct halo {
    MPI_Comm comm;
    const char *comm_name;
    int rank, size, ndims, dims[MAXDIM], coord[MAXDIM], periodic, nnbr;
    /* The stencil, directions 0 .. nnbr-1 (docs/halo-dims.md): faces first,
     * per dimension -1 then +1 (a Cartesian topology's neighbour order),
     * then edges, then corners. */
    int off[MAXDIR][MAXDIM]; /* grid offset of direction d */
    int opp[MAXDIR];         /* the direction pointing back */
    char dir_name[MAXDIR][4]; /* W/E (last dimension), N/S, U/D: "N", "SE", "UNW" */
    int partner[MAXDIR]; /* comm rank, MPI_PROC_NULL past a non-periodic edge */
    int dirs[MAXDIR];    /* directions that have a partner, ndirs of them */
    int ndirs;
    int colour, ncolours, pcolour[MAXDIR]; /* phased: my colour and each partner's */
    int count;                             /* doubles per message */
    double *sbuf[MAXDIR], *rbuf[MAXDIR];   /* by direction; a method may repoint them */
    /* What a message is, by direction: sbuf[d] holds scount[d] elements of
     * stype[d] (buffers layout: count, MPI_DOUBLE; --layout array: 1 face
     * datatype in place, or the packed face), rbuf[d] rcount[d] of rtype[d]. */
    int scount[MAXDIR], rcount[MAXDIR];
    MPI_Datatype stype[MAXDIR], rtype[MAXDIR];
    struct halo_array *arr; /* --layout array: the local array (array.c); NULL: separate buffers */
    int packing;            /* --layout array: PACK_DATATYPE, PACK_HAND or PACK_MPI */
    MPI_Request req[2 * MAXDIR];
    void *priv; /* the method's own state */
    int win_flavor;      /* RMA: HALO_WIN_CREATE or HALO_WIN_ALLOCATE (--win) */
    unsigned rma_assert; /* RMA: HALO_ASSERT_* bits (--assert) */
    int partitions;      /* partitioned: parts per face (--partitions) */
    struct halo_phases *ph; /* --phases: this test's phase clocks; NULL: off */
    int mock;               /* --mock: pack and unpack, no communication (array.c) */
};

/* --phases (phases.c, docs/halo-phases.md): every exchange in four phases, each ended by halo_phase()
 * (a clock read) where the method's code moves from one to the next; the time since the previous mark
 * goes to the phase that ends.  A method may end a phase several times (phased: one colour's sends, then
 * its waits) or never (a phase it does not have takes no time). */
enum { PH_POST, PH_SEND, PH_WAIT, PH_UNPACK, NPH };
struct halo_phases {
    uint64_t last, ticks[NPH];
};
static inline void halo_phase(struct halo *h, int phase)
{
    struct halo_phases *f = h->ph;
    if (!f) return; /* --phases off: one well-predicted branch */
    uint64_t t = mb_ticks();
    f->ticks[phase] += t - f->last;
    f->last = t;
}
/* At the start of a kernel's run: the phases count from here. */
void halo_phases_start(struct halo *h);
/* What the kernel's phases hook (mb_kernel.phases) hands over: the seconds of each phase since the last
 * halo_phases_start; and the phases' names (params phase_NAME_s). */
void halo_phases_take(struct halo *h, double *secs);
extern const char *const halo_phase_names[NPH];
/* rank 0: the phase table (--phases): every halo row's phases per exchange beside its time */
void halo_phase_report(const struct mb_run *run);

enum { HALO_WIN_CREATE, HALO_WIN_ALLOCATE };
enum { HALO_ASSERT_NOPRECEDE = 1, HALO_ASSERT_NOSUCCEED = 2, HALO_ASSERT_NOCHECK = 4 };

/* Message conventions (all methods): the message for direction d is sent to
 * partner[d] with tag d; rbuf[d] receives from partner[d] with tag opp[d].
 * Distinct tags keep a partner that is ours several times (a periodic
 * extent of 2) or ourselves (a periodic extent of 1) apart. */

struct halo_method {
    const char *name;
    const char *(*setup)(struct halo *); /* NULL, or why the method is n/a here */
    void (*run)(struct halo *, long iters);
    void (*teardown)(struct halo *);
    const char *no_phases; /* NULL, or why its phases cannot be told apart (--phases: the row's phase_na) */
};

extern const struct halo_method halo_p2p_methods[];      /* p2p.c, ends with {0} */
extern const struct halo_method halo_unsafe_methods[];   /* p2p.c: send-recv-naive, needs --unsafe */
extern const struct halo_method halo_rma_methods[];      /* rma.c */
extern const struct halo_method halo_neighbor_methods[]; /* neighbor.c */
extern const struct halo_method halo_partitioned_methods[]; /* partitioned.c: MPI-4, point-to-point */
/* Whether the method called name is an entry of table (its family: the
 * stdout tables, the memory a group needs). */
int halo_method_in(const struct halo_method *table, const char *name);

/* array.c: --layout array (docs/halo-array.md).  The local array of
 * doubles with one ghost layer, its faces, edges and corners as subarray
 * datatypes, the packings, and verification of every ghost cell. */
enum { PACK_DATATYPE, PACK_HAND, PACK_MPI, NPACK };
extern const char *const halo_packing_names[NPACK];
/* The interior extents for --count doubles per face (extents[] = 0) or the
 * given ones; NULL or why they cannot be (a usage error). */
const char *halo_array_extents(int ndims, long count, const long *given, int out[MAXDIM]);
/* The array of the halo's stencil (directions, ndims) with interior n[]
 * in mem (halo_array_doubles of them, shared by every test); its datatypes
 * and pack buffers.  Local; halo_array_free releases it (not mem). */
struct halo_array *halo_array_new(const struct halo *h, const int n[MAXDIM], double *mem);
void halo_array_free(struct halo_array *a);
size_t halo_array_doubles(int ndims, const int n[MAXDIM]); /* with the ghosts */
size_t halo_face_of(int ndims, const int n[MAXDIM]);       /* doubles in the largest face */
double *halo_array_mem(const struct halo_array *a);
size_t halo_array_size(const struct halo_array *a); /* its doubles, with the ghosts */
long halo_array_face(const struct halo_array *a); /* doubles in the largest message (a face) */
long halo_array_elems(const struct halo_array *a, int d); /* doubles in region d */
long halo_array_sent(const struct halo *h);       /* doubles this process sends per exchange */
/* Points the halo's messages at the array (datatype) or at the pack
 * buffers (pack, mpi-pack); count becomes the largest message's doubles. */
void halo_array_bind(struct halo *h, int packing);
/* One exchange (iters of them) of method m: packing and unpacking inside
 * the timed region where the packing says so. */
void halo_array_run(struct halo *h, const struct halo_method *m, long iters);
void halo_array_fill(struct halo *h, long it);
int halo_array_check(struct halo *h, long it, char *msg, size_t len);
/* --tests pack: pack and unpack every region of the stencil once (how:
 * PACK_HAND, PACK_MPI) or memcpy the same bytes there and back (NPACK). */
void halo_array_pack_only(struct halo_array *a, int how, MPI_Comm comm);
long halo_array_all(const struct halo_array *a); /* doubles in every region of the stencil */
/* pack.c: the --tests pack rows, per stencil and size (counts[] doubles per face, or extents) */
void halo_pack_tests(struct mb_run *run, int nd, const int *nbrs, int nnbrs, const long *counts, int nsizes,
                     const long *extents, double *mem);
/* The separate-buffers messages: count doubles per direction. */
void halo_buffers_bind(struct halo *h);

/* grid.c */
enum comm_kind { COMM_WORLD, COMM_DUP, COMM_EVENODD, COMM_CART, COMM_NODE, COMM_RANDOM, NCOMM };
/* A cart row's reason in simulation: SimGrid SMPI (3.32, smpi_topo.cpp)
 * ignores MPI_Cart_create's reorder, so its cart is world renamed. */
#define HALO_SIM_CART_NA "SimGrid SMPI's MPI_Cart_create ignores reorder (cart would be world)"
#ifdef MB_SIMULATED
/* the reason cart rows are n/a, or NULL where the platform's model of the
 * machine's mapping placed the cart ranks (grid.c) */
extern const char *halo_sim_cart_why;
#endif

extern const char *const halo_comm_names[NCOMM];
/* The stencils of ndims dimensions: faces (2 ndims neighbours) and all
 * (3^ndims - 1); the same number in 1-D.  halo_stencils: every count, ascending. */
enum { NSTENCIL = 5 };
extern const int halo_stencils[NSTENCIL];
int halo_faces(int ndims);
int halo_all(int ndims);
/* The grid of `size` processes in ndims dimensions (MPI_Dims_create). */
void halo_grid(int size, int ndims, int dims[MAXDIM]);
/* Creates communicator `kind` (collective over world); *note gets a remark
 * for the table footer or metadata (e.g. whether cart reordered). */
MPI_Comm halo_comm_create(enum comm_kind kind, const struct mb_run *run, int ndims, int periodic,
                          unsigned long seed, char *note, size_t len);
/* The one neighbour map: directions, partners and colours of this process
 * on comm's ndims-D grid, for the stencil of nnbr neighbours. */
void halo_neighbors(struct halo *h, MPI_Comm comm, int ndims, int periodic, int nnbr);

/* report.c: the talk-shaped tables, or rate against size (rank 0) */
/* rma_note: the RMA settings (window flavour, assertions), printed under
 * the one-sided table. */
void halo_report(const struct mb_run *run, const char *cart_note[2], const char *rma_note, const char *grid);
/* A table cell for a halo row: its MB/s, "n/a", "FAILED", or "-". */
void halo_cell(char **c, const struct mb_run *run, const struct mb_row *r);
/* array_report.c: the --layout array tables (method x packing), rank 0 */
void halo_array_report(const struct mb_run *run, const char *grid);
#endif
