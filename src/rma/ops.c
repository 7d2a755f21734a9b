/* The operation table: how each one-sided operation is issued (through MPI,
 * or by direct load/store into a shared window) and what it must leave in
 * target memory and in the origin's result buffer.  Verification is one
 * generic fill/check driven by three properties of the operation: its
 * element type, what it does to the target (keep, replace, sum) and whether
 * it returns the old target value. */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

enum etype { E_BYTE, E_DOUBLE, E_INT64 };
enum effect { T_KEEP, T_REPLACE, T_SUM };

/* properties by op index (same order as rma_ops[]) */
static const struct {
    enum etype et;
    enum effect eff;
    int result, compare;
} P[] = {
    {E_BYTE, T_REPLACE, 0, 0},  /* put */
    {E_BYTE, T_KEEP, 1, 0},     /* get */
    {E_DOUBLE, T_SUM, 0, 0},    /* accumulate */
    {E_DOUBLE, T_SUM, 1, 0},    /* get_accumulate */
    {E_INT64, T_SUM, 1, 0},     /* fetch_and_op */
    {E_INT64, T_REPLACE, 1, 1}, /* compare_and_swap */
};

static int op_index(const struct rma *r) { return (int)(r->op - rma_ops); }
static size_t esize(enum etype e) { return e == E_BYTE ? 1 : 8; }
static MPI_Aint disp(const struct rma *r, int j) { return r->w.tdisp + (MPI_Aint)((size_t)j * r->bytes); }
static size_t off(const struct rma *r, int j) { return (size_t)j * r->bytes; }
static int cnt(const struct rma *r) { return (int)(r->bytes / esize(P[op_index(r)].et)); }

/* ------------------------------------------------------------ MPI issue */

static int put_issue(struct rma *r, int j)
{
    return MPI_Put(r->src + off(r, j), cnt(r), MPI_BYTE, r->w.wtarget, disp(r, j), cnt(r), MPI_BYTE, r->w.win);
}

static int get_issue(struct rma *r, int j)
{
    return MPI_Get(r->res + off(r, j), cnt(r), MPI_BYTE, r->w.wtarget, disp(r, j), cnt(r), MPI_BYTE, r->w.win);
}

static int acc_issue(struct rma *r, int j)
{
    return MPI_Accumulate(r->src + off(r, j), cnt(r), MPI_DOUBLE, r->w.wtarget, disp(r, j), cnt(r), MPI_DOUBLE,
                          MPI_SUM, r->w.win);
}

static int getacc_issue(struct rma *r, int j)
{
    return MPI_Get_accumulate(r->src + off(r, j), cnt(r), MPI_DOUBLE, r->res + off(r, j), cnt(r), MPI_DOUBLE,
                              r->w.wtarget, disp(r, j), cnt(r), MPI_DOUBLE, MPI_SUM, r->w.win);
}

static int fop_issue(struct rma *r, int j)
{
    return MPI_Fetch_and_op(r->src + off(r, j), r->res + off(r, j), MPI_INT64_T, r->w.wtarget, disp(r, j), MPI_SUM,
                            r->w.win);
}

static int cas_issue(struct rma *r, int j)
{
    return MPI_Compare_and_swap(r->src + off(r, j), r->cmp + off(r, j), r->res + off(r, j), MPI_INT64_T,
                                r->w.wtarget, disp(r, j), r->w.win);
}

/* ----------------------------------------------- load/store (shared windows) */

static void put_ls(struct rma *r, int j) { memcpy(r->w.tremote + off(r, j), r->src + off(r, j), r->bytes); }
static void get_ls(struct rma *r, int j) { memcpy(r->res + off(r, j), r->w.tremote + off(r, j), r->bytes); }

static void acc_ls(struct rma *r, int j)
{
    double *t = (double *)(void *)(r->w.tremote + off(r, j));
    const double *s = (const double *)(void *)(r->src + off(r, j));
    for (int i = 0, n = cnt(r); i < n; i++) t[i] += s[i];
}

static void getacc_ls(struct rma *r, int j)
{
    double *t = (double *)(void *)(r->w.tremote + off(r, j)), *o = (double *)(void *)(r->res + off(r, j));
    const double *s = (const double *)(void *)(r->src + off(r, j));
    for (int i = 0, n = cnt(r); i < n; i++) {
        o[i] = t[i];
        t[i] += s[i];
    }
}

static void fop_ls(struct rma *r, int j)
{
    int64_t *t = (int64_t *)(void *)(r->w.tremote + off(r, j)), v;
    memcpy(&v, r->src + off(r, j), 8);
    v = __atomic_fetch_add(t, v, __ATOMIC_SEQ_CST);
    memcpy(r->res + off(r, j), &v, 8);
}

static void cas_ls(struct rma *r, int j)
{
    int64_t *t = (int64_t *)(void *)(r->w.tremote + off(r, j)), v, c;
    memcpy(&v, r->src + off(r, j), 8);
    memcpy(&c, r->cmp + off(r, j), 8);
    __atomic_compare_exchange_n(t, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); /* c = the old value */
    memcpy(r->res + off(r, j), &c, 8);
}

/* ----------------------------------------------------------- verification */

/* Values: origins send pattern(origin, tag); target region k starts as
 * pattern(target, tag << 8 | k), so every origin's slot is distinct. */
static uint32_t otag(const struct rma *r) { return (uint32_t)op_index(r) + 1; }
static uint32_t ttag(const struct rma *r, int k) { return otag(r) << 8 | (uint32_t)k; }

static void gen(enum etype et, void *buf, size_t nel, uint32_t sender, uint32_t tag, uint32_t it)
{
    if (et == E_BYTE) {
        mb_pattern_fill_bytes(buf, nel, sender, tag, it);
    } else if (et == E_DOUBLE) {
        mb_pattern_fill_doubles(buf, nel, sender, tag, it);
    } else {
        int64_t *b = buf;
        for (size_t i = 0; i < nel; i++) b[i] = (int64_t)mb_pattern_double(sender, tag, it, i);
    }
}

/* A value that is never the expected one: the expected pattern, inverted. */
static void junk(enum etype et, void *buf, size_t nel, uint32_t sender, uint32_t tag, uint32_t it)
{
    gen(et, buf, nel, sender, tag, it);
    unsigned char *b = buf;
    for (size_t i = 0; i < nel * esize(et); i++) b[i] ^= 0xff;
}

static char *region(const struct rma *r, int k) { return r->w.tmem + (size_t)k * r->region; }

/* Local access to the target's own window memory outside the timed region:
 * under a lock on itself for passive-target modes; active-target modes
 * (fence, PSCW) already order it with the epochs. */
static void local_access(struct rma *r, int begin)
{
    if (!r->sync->passive) return;
    if (begin)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r->w.wtarget, 0, r->w.win);
    else
        MPI_Win_unlock(r->w.wtarget, r->w.win);
}

static void fill(struct rma *r, long it)
{
    enum etype et = P[op_index(r)].et;
    size_t nel = (size_t)r->nops * r->bytes / esize(et);
    uint32_t me = (uint32_t)r->rank, t = (uint32_t)r->target, i = (uint32_t)it;
    if (r->role == ROLE_ORIGIN) {
        gen(et, r->src, nel, me, otag(r), i);
        junk(et, r->res, nel, t, ttag(r, r->oidx), i);
        if (P[op_index(r)].compare) gen(et, r->cmp, nel, t, ttag(r, r->oidx), i);
    } else if (r->role == ROLE_TARGET) {
        local_access(r, 1);
        for (int k = 0; k < r->norigins; k++) gen(et, region(r, k), nel, t, ttag(r, k), i);
        local_access(r, 0);
    }
}

static long first_diff(const void *pa, const void *pb, size_t n)
{
    const unsigned char *a = pa, *b = pb;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return (long)i;
    return -1;
}

static int check(struct rma *r, long it, char *msg, size_t len)
{
    int oi = op_index(r);
    enum etype et = P[oi].et;
    size_t es = esize(et), nel = (size_t)r->nops * r->bytes / es, nb = nel * es;
    uint32_t t = (uint32_t)r->target, i = (uint32_t)it;
    unsigned char *want = malloc(nb), *o = malloc(nb);
    int bad = 0;
    if (r->role == ROLE_ORIGIN && P[oi].result) { /* the old target value */
        gen(et, want, nel, t, ttag(r, r->oidx), i);
        long b = first_diff(r->res, want, nb);
        if (b >= 0) {
            snprintf(msg, len, "%s: result buffer from target %d: first bad byte %ld (operation %ld)", r->op->name,
                     r->target, b, b / (long)r->bytes);
            bad = 1;
        }
    } else if (r->role == ROLE_TARGET && P[oi].eff != T_KEEP) {
        local_access(r, 1);
        for (int k = 0; k < r->norigins && !bad; k++) {
            gen(et, o, nel, (uint32_t)r->origins[k], otag(r), i);
            if (P[oi].eff == T_REPLACE) {
                memcpy(want, o, nb);
            } else {
                gen(et, want, nel, t, ttag(r, k), i);
                for (size_t e = 0; e < nel; e++)
                    if (et == E_DOUBLE)
                        ((double *)(void *)want)[e] += ((double *)(void *)o)[e];
                    else
                        ((int64_t *)(void *)want)[e] += ((int64_t *)(void *)o)[e];
            }
            long b = first_diff(region(r, k), want, nb);
            if (b >= 0) {
                snprintf(msg, len, "%s: target memory written by origin %d: first bad byte %ld (operation %ld)",
                         r->op->name, r->origins[k], b, b / (long)r->bytes);
                bad = 1;
            }
        }
        local_access(r, 0);
    }
    free(want);
    free(o);
    return bad;
}

const struct rma_op rma_ops[] = {
    {"put", 0, 1, put_issue, put_ls, fill, check},
    {"get", 0, 1, get_issue, get_ls, fill, check},
    {"accumulate", 0, 8, acc_issue, acc_ls, fill, check},
    {"get_accumulate", 0, 8, getacc_issue, getacc_ls, fill, check},
    {"fetch_and_op", 1, 8, fop_issue, fop_ls, fill, check},
    {"compare_and_swap", 1, 8, cas_issue, cas_ls, fill, check},
    {0},
};

/* Before a test: benign origin values (no NaN or denormal in accumulates)
 * and zeroed target regions, so one test's leftovers never slow the next. */
void rma_prepare(struct rma *r)
{
    size_t nb = (size_t)r->nops * r->bytes;
    MPI_Barrier(r->comm);
    if (r->role == ROLE_ORIGIN) {
        enum etype et = P[op_index(r)].et;
        for (size_t e = 0; e < nb / esize(et); e++) {
            if (et == E_BYTE)
                r->src[e] = 1;
            else if (et == E_DOUBLE)
                ((double *)(void *)r->src)[e] = 1.0;
            else
                ((int64_t *)(void *)r->src)[e] = 1;
        }
        memset(r->cmp, 0, nb);
    } else if (r->role == ROLE_TARGET) {
        local_access(r, 1);
        for (int k = 0; k < r->norigins; k++) memset(region(r, k), 0, nb);
        local_access(r, 0);
    }
    MPI_Barrier(r->comm);
}
