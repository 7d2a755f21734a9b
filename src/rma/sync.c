/* The synchronisation-mode table.  Each mode is four hooks that act by
 * role (origin, target, or a rank outside the pair that still belongs to
 * the window's group): open/close around a run of epochs, begin/end around
 * one epoch.  rma_run_timed() composes them with any operation. */
#include "rma.h"

static int is_origin(const struct rma *r) { return r->role == ROLE_ORIGIN; }

/* fence: collective over the window's group, so every member calls it; the
 * closing fence of one epoch opens the next. */
static int fence(struct rma *r) { return MPI_Win_fence(0, r->w.win); }
static int fence_finish(struct rma *r) { return MPI_Win_fence(MPI_MODE_NOSUCCEED, r->w.win); }

/* PSCW: the target exposes its window to the origins, each origin accesses the target. */
static int pscw_begin(struct rma *r)
{
    if (r->role == ROLE_TARGET) return MPI_Win_post(r->w.origin_grp, 0, r->w.win);
    return is_origin(r) ? MPI_Win_start(r->w.target_grp, 0, r->w.win) : MPI_SUCCESS;
}

static int pscw_end(struct rma *r)
{
    if (r->role == ROLE_TARGET) return MPI_Win_wait(r->w.win);
    return is_origin(r) ? MPI_Win_complete(r->w.win) : MPI_SUCCESS;
}

static int lock_excl(struct rma *r)
{
    return is_origin(r) ? MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r->w.wtarget, 0, r->w.win) : MPI_SUCCESS;
}

static int lock_shared(struct rma *r)
{
    return is_origin(r) ? MPI_Win_lock(MPI_LOCK_SHARED, r->w.wtarget, 0, r->w.win) : MPI_SUCCESS;
}

static int unlock(struct rma *r) { return is_origin(r) ? MPI_Win_unlock(r->w.wtarget, r->w.win) : MPI_SUCCESS; }
static int lock_all(struct rma *r) { return is_origin(r) ? MPI_Win_lock_all(0, r->w.win) : MPI_SUCCESS; }
static int unlock_all(struct rma *r) { return is_origin(r) ? MPI_Win_unlock_all(r->w.win) : MPI_SUCCESS; }
static int flush(struct rma *r) { return is_origin(r) ? MPI_Win_flush(r->w.wtarget, r->w.win) : MPI_SUCCESS; }
static int flush_local(struct rma *r)
{
    return is_origin(r) ? MPI_Win_flush_local(r->w.wtarget, r->w.win) : MPI_SUCCESS;
}

/* load-store: direct access inside a lock_all epoch; MPI_Win_sync is the
 * memory barrier that makes the stores visible (unified memory model). */
static int ls_open(struct rma *r) { return is_origin(r) ? MPI_Win_lock_all(MPI_MODE_NOCHECK, r->w.win) : MPI_SUCCESS; }
static int ls_sync(struct rma *r) { return is_origin(r) ? MPI_Win_sync(r->w.win) : MPI_SUCCESS; }

const struct rma_sync rma_syncs[] = {
    {"fence", 0, 0, fence, NULL, fence, NULL, fence_finish},
    {"pscw", 0, 0, NULL, pscw_begin, pscw_end, NULL, NULL},
    {"lock-exclusive", 1, 0, NULL, lock_excl, unlock, NULL, NULL},
    {"lock-shared", 1, 0, NULL, lock_shared, unlock, NULL, NULL},
    {"lockall-flush", 1, 0, lock_all, NULL, flush, unlock_all, NULL},
    {"lockall-flush-local", 1, 0, lock_all, NULL, flush_local, unlock_all, NULL},
    {"load-store", 1, 1, ls_open, NULL, ls_sync, unlock_all, NULL},
    {0},
};

/* iters epochs of nops operations each; returns the local seconds they took.
 * A mode's open/close (the opening fence, lock_all ... unlock_all) bracket
 * the whole run and stay outside the timed span, so the figure is the
 * steady-state cost of one epoch whatever the number of iterations. */
double rma_run_timed(void *state, long iters)
{
    struct rma *r = state;
    const struct rma_sync *s = r->sync;
    int ls = s->shared_only, e;
#define NOTE(call)                                                                                                    \
    do {                                                                                                              \
        if ((e = (call)) != MPI_SUCCESS && !r->err) r->err = e;                                                       \
    } while (0)
    if (s->open) NOTE(s->open(r));
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        if (s->begin) NOTE(s->begin(r));
        if (is_origin(r))
            for (int j = 0; j < r->nops; j++) {
                if (ls)
                    r->op->load_store(r, j);
                else
                    NOTE(r->op->issue(r, j));
            }
        if (s->end) NOTE(s->end(r));
    }
    double t = MPI_Wtime() - t0;
    if (s->close) NOTE(s->close(r));
#undef NOTE
    return t;
}
