/* One-sided (RMA) halo exchanges, in any number of dimensions (the stencil's
 * directions come from grid.c; nothing here depends on them).
 *
 * Window layout, in units of one double (disp_unit = 8):
 *   put methods: one slot of `count` doubles per direction; the message for
 *     direction d goes to partner[d]'s slot opp[d], so rbuf[d] = slot d and
 *     every direction has its own slot (a partner that is ours in several
 *     directions on a periodic extent of 2, or ourselves on an extent of 1,
 *     never collides);
 *   get methods: the window holds the send buffers (sbuf[d] = slot d) and
 *     rbuf[d] is read from partner[d]'s slot opp[d];
 *   passive target (lock-put, lock-get, lockall-flush): two sets of slots
 *     (by the parity of the exchange) and, after them, one 64-bit flag per
 *     direction.
 *   lock-put, lockall-flush: exchange n puts the data into set n % 2,
 *     completes it with a flush, then writes n into the target's flag with
 *     MPI_Accumulate (MPI_REPLACE); the target polls its flags with
 *     MPI_Fetch_and_op (MPI_NO_OP, atomic with the accumulate) until every
 *     one is >= n, then MPI_Win_sync.  Two sets make it race-free without a
 *     second message: an origin writes set n % 2 again only in exchange
 *     n + 2, which it starts after receiving the target's exchange n + 1
 *     data, which the target sends only after it has finished with n.
 *   lock-get: set n % 2 holds what a process exposes in exchange n (sbuf[]
 *     points there); it publishes it (MPI_Win_sync), writes n into each
 *     neighbour's flag ("ready"), waits until its own flags are >= n, then
 *     gets from every neighbour, each get completed by its unlock.  An owner
 *     writes set n % 2 again only for exchange n + 2, after it has finished
 *     n + 1, i.e. after every neighbour's "ready n + 1" — which a neighbour
 *     sends only once its gets of n are complete (at the target too).
 *
 * --assert applies MPI_MODE_NOPRECEDE to the opening and MPI_MODE_NOSUCCEED
 * to the closing fence, MPI_MODE_NOCHECK to MPI_Win_lock / MPI_Win_lock_all
 * (valid: every lock here is shared).  NOCHECK is not passed to PSCW: the
 * exchange does not guarantee that the matching post has completed. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>


enum kind { PUT, GET };

/* A method's state (h->priv): every member of a group has its own. */
struct rma {
    MPI_Win win;
    double *mem;  /* window memory */
    int created;  /* mem is ours (MPI_Win_create) */
    enum kind kind;
    MPI_Group group; /* distinct partners (PSCW) */
    int npartners;
    int64_t epoch, flagval;
    MPI_Aint flag0; /* displacement of the flags */
    int a_pre, a_post, a_lock;
};

static MPI_Aint slot(const struct halo *h, int par, int d) { return ((MPI_Aint)par * h->nnbr + d) * h->count; }

/* --layout array with datatypes: the window is the array itself, and a
 * put (get) moves my send region d into (from) the partner's ghost region
 * opp[d] (send region opp[d]) — halo.h's stype/rtype, the same shapes on
 * every process.  Otherwise (buffers, or packed faces) the message lands in
 * the target's slot: scount[d] elements of stype[d] (count, MPI_DOUBLE). */
static int in_array(const struct halo *h) { return h->arr && h->packing == PACK_DATATYPE; }

static void put(const struct halo *h, MPI_Win win, int d, int par)
{
    int o = h->opp[d];
    if (in_array(h))
        MPI_Put(h->sbuf[d], 1, h->stype[d], h->partner[d], 0, 1, h->rtype[o], win);
    else
        MPI_Put(h->sbuf[d], h->scount[d], h->stype[d], h->partner[d], slot(h, par, o), h->scount[d], h->stype[d], win);
}

static void get(const struct halo *h, MPI_Win win, int d, int par)
{
    int o = h->opp[d];
    if (in_array(h))
        MPI_Get(h->rbuf[d], 1, h->rtype[d], h->partner[d], 0, 1, h->stype[o], win);
    else
        MPI_Get(h->rbuf[d], h->rcount[d], h->rtype[d], h->partner[d], slot(h, par, o), h->rcount[d], h->rtype[d], win);
}

/* What the array layout cannot do here; NULL: it can. */
static const char *array_na(const struct halo *h, int passive)
{
    if (!h->arr) return NULL;
    if (h->packing == PACK_MPI) return "MPI_PACKED data is for send and receive; a window holds typed memory";
    if (passive && h->packing == PACK_DATATYPE)
        return "passive target needs two sets of landing slots (the array has one set of ghost cells): pack only";
    return NULL;
}

/* Creates the window of `n` doubles (collective); NULL or the reason it is n/a. */
static const char *make_window(struct halo *h, MPI_Aint n, double *over)
{
    MPI_Aint bytes = n * (MPI_Aint)sizeof(double);
    int err;
    struct rma *r = h->priv = calloc(1, sizeof *r);
    r->a_pre = h->rma_assert & HALO_ASSERT_NOPRECEDE ? MPI_MODE_NOPRECEDE : 0;
    r->a_post = h->rma_assert & HALO_ASSERT_NOSUCCEED ? MPI_MODE_NOSUCCEED : 0;
    r->a_lock = h->rma_assert & HALO_ASSERT_NOCHECK ? MPI_MODE_NOCHECK : 0;
    MPI_Errhandler old;
    MPI_Comm_get_errhandler(h->comm, &old);
    MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN);
    if (over) { /* the application's array: MPI_Win_create, whatever --win says */
        r->mem = over;
        err = MPI_Win_create(r->mem, bytes, sizeof(double), MPI_INFO_NULL, h->comm, &r->win);
    } else if (h->win_flavor == HALO_WIN_CREATE) {
        r->mem = mb_alloc((size_t)bytes ? (size_t)bytes : 1);
        r->created = 1;
        err = MPI_Win_create(r->mem, bytes, sizeof(double), MPI_INFO_NULL, h->comm, &r->win);
    } else {
        err = MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, h->comm, &r->mem, &r->win);
        if (err == MPI_SUCCESS && bytes) memset(r->mem, 0, (size_t)bytes);
    }
    MPI_Comm_set_errhandler(h->comm, old);
    MPI_Errhandler_free(&old);
    int ok = err == MPI_SUCCESS, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, h->comm);
    if (all) {
        MPI_Barrier(h->comm); /* every window zeroed before anyone accesses one */
        return NULL;
    }
    /* a window that exists on some ranks only cannot be freed collectively: leave it */
    if (r->created) free(r->mem);
    free(r);
    h->priv = NULL;
    static char why[MPI_MAX_ERROR_STRING + 64];
    if (ok) return "window creation failed on another rank";
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    snprintf(why, sizeof why, "MPI_Win_%s failed: %s", h->win_flavor == HALO_WIN_CREATE ? "create" : "allocate",
             msg);
    return why;
}

static void free_window(struct halo *h)
{
    struct rma *r = h->priv;
    MPI_Win_free(&r->win);
    if (r->created) free(r->mem);
    free(r);
    h->priv = NULL;
}

/* The distinct partners as a group of the communicator (PSCW). */
static void make_group(struct halo *h)
{
    struct rma *r = h->priv;
    int ranks[MAXDIR], n = 0;
    for (int i = 0; i < h->ndirs; i++) {
        int p = h->partner[h->dirs[i]], seen = 0;
        for (int k = 0; k < n; k++) seen |= ranks[k] == p;
        if (!seen) ranks[n++] = p;
    }
    MPI_Group all;
    MPI_Comm_group(h->comm, &all);
    MPI_Group_incl(all, n, ranks, &r->group);
    MPI_Group_free(&all);
    r->npartners = n;
}

/* ------------------------------------------------- fence and PSCW (active) */

static const char *active_setup(struct halo *h, enum kind kind, int pscw)
{
    const char *why = array_na(h, 0);
    if (why) return why;
    why = in_array(h) ? make_window(h, (MPI_Aint)halo_array_size(h->arr), halo_array_mem(h->arr))
                      : make_window(h, (MPI_Aint)h->nnbr * h->count, NULL);
    if (why) return why;
    struct rma *r = h->priv;
    r->kind = kind;
    for (int d = 0; d < h->nnbr && !in_array(h); d++) {
        if (kind == PUT)
            h->rbuf[d] = r->mem + slot(h, 0, d);
        else
            h->sbuf[d] = r->mem + slot(h, 0, d);
    }
    if (pscw) make_group(h);
    return NULL;
}

static const char *fence_put_setup(struct halo *h) { return active_setup(h, PUT, 0); }
static const char *fence_get_setup(struct halo *h) { return active_setup(h, GET, 0); }
static const char *pscw_put_setup(struct halo *h) { return active_setup(h, PUT, 1); }
static const char *pscw_get_setup(struct halo *h) { return active_setup(h, GET, 1); }

/* Every direction's put (or get) of one exchange; then --overlap's
 * computation, before the synchronisation that completes them (overlap.c). */
static void transfer(struct halo *h)
{
    struct rma *r = h->priv;
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        if (r->kind == PUT)
            put(h, r->win, d, 0);
        else
            get(h, r->win, d, 0);
    }
    halo_phase(h, PH_SEND);
    mb_compute();
}

/* fence; puts/gets; fence: the opening fence tells the origins that the
 * target is done with the previous halo, the closing one completes this one. */
static void fence_run(struct halo *h, long iters)
{
    struct rma *r = h->priv;
    for (long it = 0; it < iters; it++) {
        MPI_Win_fence(r->a_pre, r->win); /* the targets are ready: the phase post */
        halo_phase(h, PH_POST);
        transfer(h);
        MPI_Win_fence(r->a_post, r->win);
        halo_phase(h, PH_WAIT);
    }
}

/* post (expose my window to my partners); start (access theirs); puts/gets;
 * complete (mine are done); wait (theirs into my window are done). */
static void pscw_run(struct halo *h, long iters)
{
    struct rma *r = h->priv;
    if (!r->npartners) return; /* nobody to exchange with (1 process, non-periodic) */
    for (long it = 0; it < iters; it++) {
        MPI_Win_post(r->group, 0, r->win);
        MPI_Win_start(r->group, 0, r->win);
        halo_phase(h, PH_POST);
        transfer(h);
        MPI_Win_complete(r->win);
        MPI_Win_wait(r->win);
        halo_phase(h, PH_WAIT);
    }
}

static void active_free(struct halo *h) { free_window(h); }

static void pscw_free(struct halo *h)
{
    struct rma *r = h->priv;
    MPI_Group_free(&r->group);
    free_window(h);
}

/* ---------------------------------------------------- passive target */

static const char *passive_setup(struct halo *h, enum kind kind)
{
#ifdef MB_SIMULATED
    (void)kind;
    /* from 16 simulated ranks on the flag polling crawls: each poll advances
     * simulated time by ~1e-10 s while partners' messages take microseconds.
     * Charging a poll 1 us (smpi_execute) fixes it up to 64 ranks but is too
     * slow at 1024 (docs/simulate.md) — n/a, not a run that never ends */
    return "passive-target polling barely advances SimGrid SMPI 3.32's clock (never ends from 16 ranks)";
#endif
    const char *why = array_na(h, 1);
    if (why) return why;
    MPI_Aint n = 2 * (MPI_Aint)h->nnbr * h->count + h->nnbr; /* two sets of slots + flags */
    why = make_window(h, n, NULL);
    if (why) return why;
    struct rma *r = h->priv;
    r->kind = kind;
    r->flag0 = 2 * (MPI_Aint)h->nnbr * h->count;
    for (int d = 0; d < h->nnbr; d++) {
        if (kind == PUT)
            h->rbuf[d] = r->mem + slot(h, 0, d);
        else
            h->sbuf[d] = r->mem + slot(h, 1, d); /* what exchange 1 exposes */
    }
    return NULL;
}

static const char *lock_put_setup(struct halo *h) { return passive_setup(h, PUT); }
static const char *lock_get_setup(struct halo *h) { return passive_setup(h, GET); }

static const char *lockall_setup(struct halo *h)
{
    const char *why = passive_setup(h, PUT);
    if (!why) MPI_Win_lock_all(((struct rma *)h->priv)->a_lock, ((struct rma *)h->priv)->win);
    return why;
}

/* Waits until every direction's flag is >= n, then makes the window
 * visible to loads (put: rbuf[] then points at set n % 2).  The caller holds
 * a passive epoch that includes this process. */
static void await(struct halo *h, int64_t n)
{
    struct rma *r = h->priv;
    int me = h->rank;
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        int64_t v;
        do {
            MPI_Fetch_and_op(NULL, &v, MPI_INT64_T, me, r->flag0 + d, MPI_NO_OP, r->win);
            MPI_Win_flush(me, r->win);
        } while (v < n);
    }
    MPI_Win_sync(r->win);
    if (r->kind == PUT)
        for (int i = 0; i < h->ndirs; i++) h->rbuf[h->dirs[i]] = r->mem + slot(h, (int)(n & 1), h->dirs[i]);
}

/* Per partner: lock (shared); put; flush; flag; unlock.  Then lock myself
 * and poll my flags. */
static void lock_put_run(struct halo *h, long iters)
{
    struct rma *r = h->priv;
    MPI_Win_lock(MPI_LOCK_SHARED, h->rank, r->a_lock, r->win); /* publish local stores (--verify fill) */
    MPI_Win_sync(r->win);
    MPI_Win_unlock(h->rank, r->win);
    for (long it = 0; it < iters; it++) {
        int64_t n = ++r->epoch;
        int par = (int)(n & 1);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i], o = h->opp[d], p = h->partner[d];
            MPI_Win_lock(MPI_LOCK_SHARED, p, r->a_lock, r->win);
            put(h, r->win, d, par);
            MPI_Win_flush(p, r->win);
            MPI_Accumulate(&n, 1, MPI_INT64_T, p, r->flag0 + o, 1, MPI_INT64_T, MPI_REPLACE, r->win);
            MPI_Win_unlock(p, r->win);
        }
        halo_phase(h, PH_SEND);
        MPI_Win_lock(MPI_LOCK_SHARED, h->rank, r->a_lock, r->win);
        await(h, n);
        MPI_Win_unlock(h->rank, r->win);
        halo_phase(h, PH_WAIT);
    }
}

/* Per exchange n (the data exposed in set n % 2): lock myself, publish my
 * stores; per partner lock (shared), flag "ready n", unlock; lock myself,
 * poll my flags; per partner lock, get, unlock (completes the get at both
 * ends).  sbuf[] then moves to set (n + 1) % 2, where the next exchange's
 * data is written: safe, see the top of this file. */
static void lock_get_run(struct halo *h, long iters)
{
    struct rma *r = h->priv;
    for (long it = 0; it < iters; it++) {
        int64_t n = ++r->epoch;
        int par = (int)(n & 1);
        MPI_Win_lock(MPI_LOCK_SHARED, h->rank, r->a_lock, r->win);
        MPI_Win_sync(r->win);
        MPI_Win_unlock(h->rank, r->win);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i], p = h->partner[d];
            MPI_Win_lock(MPI_LOCK_SHARED, p, r->a_lock, r->win);
            MPI_Accumulate(&n, 1, MPI_INT64_T, p, r->flag0 + h->opp[d], 1, MPI_INT64_T, MPI_REPLACE, r->win);
            MPI_Win_unlock(p, r->win);
        }
        halo_phase(h, PH_POST); /* "ready": the partners may get */
        MPI_Win_lock(MPI_LOCK_SHARED, h->rank, r->a_lock, r->win);
        await(h, n);
        MPI_Win_unlock(h->rank, r->win);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i], p = h->partner[d];
            MPI_Win_lock(MPI_LOCK_SHARED, p, r->a_lock, r->win);
            get(h, r->win, d, par);
            MPI_Win_unlock(p, r->win);
        }
        halo_phase(h, PH_WAIT); /* the partners' readiness, then the gets that complete at their unlocks */
        for (int d = 0; d < h->nnbr; d++) h->sbuf[d] = r->mem + slot(h, par ^ 1, d);
    }
}

/* Inside one lock_all epoch (opened in setup): all puts; flush_all; all
 * flags; flush_all; poll my flags. */
static void lockall_run(struct halo *h, long iters)
{
    struct rma *r = h->priv;
    MPI_Win_sync(r->win); /* publish local stores (--verify fill) */
    for (long it = 0; it < iters; it++) {
        int64_t n = ++r->epoch;
        int par = (int)(n & 1);
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            put(h, r->win, d, par);
        }
        halo_phase(h, PH_SEND);
        mb_compute(); /* --overlap: the puts may proceed until the flush */
        MPI_Win_flush_all(r->win);
        r->flagval = n;
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            MPI_Accumulate(&r->flagval, 1, MPI_INT64_T, h->partner[d], r->flag0 + h->opp[d], 1, MPI_INT64_T,
                           MPI_REPLACE, r->win);
        }
        MPI_Win_flush_all(r->win);
        await(h, n);
        halo_phase(h, PH_WAIT);
    }
}

static void lockall_free(struct halo *h)
{
    struct rma *r = h->priv;
    MPI_Win_unlock_all(r->win);
    free_window(h);
}

const struct halo_method halo_rma_methods[] = {
    {"rma-fence-put", fence_put_setup, fence_run, active_free, NULL},
    {"rma-fence-get", fence_get_setup, fence_run, active_free, NULL},
    {"rma-pscw-put", pscw_put_setup, pscw_run, pscw_free, NULL},
    {"rma-pscw-get", pscw_get_setup, pscw_run, pscw_free, NULL},
    {"rma-lock-put", lock_put_setup, lock_put_run, active_free, NULL},
    {"rma-lock-get", lock_get_setup, lock_get_run, active_free, NULL},
    {"rma-lockall-flush", lockall_setup, lockall_run, lockall_free, NULL},
    {0},
};
