/* The library's collectives, blocking and nonblocking, with their
 * verification.  Byte collectives carry mb_pattern bytes keyed by (sender,
 * destination, iteration); reductions work on doubles whose values are
 * integers below 2^32, so every sum of up to 2^20 of them is exact. */
#include "coll.h"

#include <math.h>
#include <string.h>

#define B MPI_BYTE
#define D MPI_DOUBLE
#define I(s) ((int)(s)) /* counts were checked against INT_MAX in main.c */

enum { TAG_BCAST = 1u << 20, TAG_GATHER, TAG_REDUCE };

/* ------------------------------------------------------------ helpers */

static void poison(void *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t it)
{
    unsigned char *b = buf;
    mb_pattern_fill_bytes(b, n, sender, tag, it);
    for (size_t i = 0; i < n; i++) b[i] ^= 0xA5; /* differs from the pattern in every byte */
}

static int check_bytes(const char *what, const void *buf, size_t n, int sender, uint32_t tag, long it, char *msg,
                       size_t len)
{
    long bad = mb_pattern_check_bytes(buf, n, (uint32_t)sender, tag, (uint32_t)it);
    if (bad < 0) return 0;
    snprintf(msg, len, "%s from rank %d: first bad byte at index %ld of %zu", what, sender, bad, n);
    return 1;
}

int coll_next_root(const struct coll_state *s)
{
    return s->root_mode ? (int)(s->calls % s->size) : s->fixed_root;
}

void coll_bcast_fill(struct coll_state *s, long it)
{
    int root = coll_next_root(s);
    if (s->rank == root)
        mb_pattern_fill_bytes(s->sbuf, s->sbytes, (uint32_t)root, TAG_BCAST, (uint32_t)it);
    else
        poison(s->sbuf, s->sbytes, (uint32_t)root, TAG_BCAST, (uint32_t)it);
}

int coll_bcast_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return check_bytes("broadcast data", s->sbuf, s->sbytes, s->root, TAG_BCAST, it, msg, len);
}

/* A reduction input: rank r's element g in iteration it. */
static double rv(int r, long it, size_t g)
{
    return fmod(mb_pattern_double((uint32_t)r, TAG_REDUCE, (uint32_t)it, g), 4294967296.0);
}

/* Sum over ranks lo..hi of element g. */
static double rsum(int lo, int hi, long it, size_t g)
{
    double e = 0;
    for (int r = lo; r <= hi; r++) e += rv(r, it, g);
    return e;
}

void coll_reduce_fill(struct coll_state *s, long it)
{
    double *in = (double *)s->sbuf, *out = (double *)s->rbuf;
    for (size_t g = 0; g < s->sbytes / 8; g++) in[g] = rv(s->rank, it, g);
    for (size_t i = 0; i < s->rbytes / 8; i++) out[i] = -1.0; /* never a sum of non-negative values */
}

/* out[i] must be the sum over ranks lo..hi of element first + i. */
static int reduce_expect(const struct coll_state *s, int lo, int hi, size_t first, long it, char *msg, size_t len)
{
    const double *out = (const double *)s->rbuf;
    for (size_t i = 0; i < s->count; i++) {
        double e = rsum(lo, hi, it, first + i);
        if (out[i] != e) {
            snprintf(msg, len, "reduced element %zu: got %.17g, expected %.17g (sum over ranks %d..%d)", i, out[i],
                     e, lo, hi);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ barrier */

static int barrier(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Ibarrier(s->comm, r) : MPI_Barrier(s->comm);
}

/* ------------------------------------------------------------ bcast */

static int bcast(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Ibcast(s->sbuf, I(s->bytes), B, s->root, s->comm, r)
             : MPI_Bcast(s->sbuf, I(s->bytes), B, s->root, s->comm);
}

/* ------------------------------------------------------------ reductions */

static int reduce(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Ireduce(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->root, s->comm, r)
             : MPI_Reduce(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->root, s->comm);
}

int coll_reduce_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return s->rank == s->root ? reduce_expect(s, 0, s->size - 1, 0, it, msg, len) : 0;
}

static int allreduce(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Iallreduce(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm, r)
             : MPI_Allreduce(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm);
}

int coll_allreduce_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return reduce_expect(s, 0, s->size - 1, 0, it, msg, len);
}

static int reduce_scatter_block(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Ireduce_scatter_block(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm, r)
             : MPI_Reduce_scatter_block(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm);
}

static int reduce_scatter_block_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return reduce_expect(s, 0, s->size - 1, (size_t)s->rank * s->count, it, msg, len);
}

static int scan(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Iscan(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm, r)
             : MPI_Scan(s->sbuf, s->rbuf, I(s->count), D, MPI_SUM, s->comm);
}

static int scan_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return reduce_expect(s, 0, s->rank, 0, it, msg, len);
}

/* ------------------------------------------------------------ gather family */

/* Gather family: one send block, pattern(rank, TAG_GATHER). */
void coll_gather_fill(struct coll_state *s, long it)
{
    mb_pattern_fill_bytes(s->sbuf, s->bytes, (uint32_t)s->rank, TAG_GATHER, (uint32_t)it);
    poison(s->rbuf, s->rbytes, (uint32_t)s->rank, TAG_GATHER, (uint32_t)it);
}

/* Send block j (for rank j) is pattern(rank, j); for scatter only the
 * root's blocks are sent, so the others' are poisoned. */
static void blocks_fill(struct coll_state *s, long it, int only_root)
{
    int root = coll_next_root(s);
    for (int j = 0; j < s->size; j++) {
        char *b = s->sbuf + (size_t)j * s->bytes;
        if (only_root && s->rank != root)
            poison(b, s->bytes, (uint32_t)s->rank, (uint32_t)j, (uint32_t)it);
        else
            mb_pattern_fill_bytes(b, s->bytes, (uint32_t)s->rank, (uint32_t)j, (uint32_t)it);
    }
    poison(s->rbuf, s->rbytes, (uint32_t)s->rank, TAG_GATHER, (uint32_t)it);
}

static void scatter_fill(struct coll_state *s, long it) { blocks_fill(s, it, 1); }
void coll_alltoall_fill(struct coll_state *s, long it) { blocks_fill(s, it, 0); }

/* Receive block i came from rank i (gather family) with tag t. */
static int gathered_check(struct coll_state *s, long it, uint32_t tag, char *msg, size_t len)
{
    for (int i = 0; i < s->size; i++)
        if (check_bytes("gathered block", s->rbuf + (size_t)i * s->bytes, s->bytes, i, tag, it, msg, len)) return 1;
    return 0;
}

static int gather(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Igather(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->root, s->comm, r)
             : MPI_Gather(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->root, s->comm);
}

static int gather_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return s->rank == s->root ? gathered_check(s, it, TAG_GATHER, msg, len) : 0;
}

static int allgather(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Iallgather(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm, r)
             : MPI_Allgather(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm);
}

int coll_allgather_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return gathered_check(s, it, TAG_GATHER, msg, len);
}

static int scatter(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Iscatter(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->root, s->comm, r)
             : MPI_Scatter(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->root, s->comm);
}

static int scatter_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return check_bytes("scattered block", s->rbuf, s->bytes, s->root, (uint32_t)s->rank, it, msg, len);
}

static int alltoall(struct coll_state *s, MPI_Request *r)
{
    return r ? MPI_Ialltoall(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm, r)
             : MPI_Alltoall(s->sbuf, I(s->bytes), B, s->rbuf, I(s->bytes), B, s->comm);
}

int coll_alltoall_check(struct coll_state *s, long it, char *msg, size_t len)
{
    return gathered_check(s, it, (uint32_t)s->rank, msg, len);
}

/* ------------------------------------------------------------ the table */

#define NB COLL_NB
const struct coll_op coll_library[] = {
    {"barrier", "library", NB | COLL_SYNC | COLL_NOSIZE, MUL_0, MUL_0, barrier, NULL, NULL, AGG_NONE, NULL, NULL},
    {"bcast", "library", NB | COLL_ROOTED, MUL_1, MUL_0, bcast, coll_bcast_fill, coll_bcast_check, AGG_P1, NULL, NULL},
    {"reduce", "library", NB | COLL_ROOTED | COLL_DOUBLES, MUL_1, MUL_1, reduce, coll_reduce_fill, coll_reduce_check,
     AGG_P1, NULL, NULL},
    {"allreduce", "library", NB | COLL_DOUBLES, MUL_1, MUL_1, allreduce, coll_reduce_fill, coll_allreduce_check,
     AGG_2P1, NULL, NULL},
    {"gather", "library", NB | COLL_ROOTED, MUL_1, MUL_P, gather, coll_gather_fill, gather_check, AGG_P1, NULL, NULL},
    {"scatter", "library", NB | COLL_ROOTED, MUL_P, MUL_1, scatter, scatter_fill, scatter_check, AGG_P1, NULL, NULL},
    {"allgather", "library", NB, MUL_1, MUL_P, allgather, coll_gather_fill, coll_allgather_check, AGG_PP1, NULL, NULL},
    {"alltoall", "library", NB, MUL_P, MUL_P, alltoall, coll_alltoall_fill, coll_alltoall_check, AGG_PP1, NULL, NULL},
    {"reduce_scatter_block", "library", NB | COLL_DOUBLES, MUL_P, MUL_1, reduce_scatter_block, coll_reduce_fill,
     reduce_scatter_block_check, AGG_PP1, NULL, NULL},
    {"scan", "library", NB | COLL_DOUBLES, MUL_1, MUL_1, scan, coll_reduce_fill, scan_check, AGG_P1, NULL, NULL},
    {0},
};
