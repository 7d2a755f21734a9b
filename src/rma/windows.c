/* The window-flavour table: MPI_Win_create over memory we allocate,
 * MPI_Win_allocate, MPI_Win_create_dynamic + MPI_Win_attach, and
 * MPI_Win_allocate_shared among the ranks of one node.  Only the target
 * exposes memory (one region per origin); the others join with size 0. */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

static size_t total(const struct rma *r) { return r->role == ROLE_TARGET ? (size_t)r->norigins * r->region : 0; }

/* Failure anywhere -> the same reason on every rank (collective over r->comm). */
static const char *agree(struct rma *r, int rc, const char *call, char *why, size_t len)
{
    int who = rc != MPI_SUCCESS ? r->rank : r->nprocs, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, r->comm);
    if (first == r->nprocs) return NULL;
    char err[MPI_MAX_ERROR_STRING + 64] = "";
    if (r->rank == first) snprintf(err, sizeof err, "%s failed: %s", call, rma_errstr(rc, why, len));
    MPI_Bcast(err, (int)sizeof err, MPI_CHAR, first, r->comm);
    snprintf(why, len, "%s", err);
    return why;
}

/* After creation: error handler, PSCW groups (in window ranks), displacements. */
static void finish_setup(struct rma *r)
{
    MPI_Win_set_errhandler(r->w.win, MPI_ERRORS_RETURN);
    MPI_Group world, wg;
    MPI_Comm_group(r->comm, &world);
    MPI_Comm_group(r->w.wcomm, &wg);
    int *o = malloc((size_t)r->norigins * sizeof *o);
    MPI_Group_translate_ranks(world, r->norigins, r->origins, wg, o);
    MPI_Group_translate_ranks(world, 1, &r->target, wg, &r->w.wtarget);
    int ok = r->w.wtarget != MPI_UNDEFINED;
    for (int k = 0; k < r->norigins; k++) ok = ok && o[k] != MPI_UNDEFINED;
    if (ok) {
        MPI_Group_incl(wg, r->norigins, o, &r->w.origin_grp);
        MPI_Group_incl(wg, 1, &r->w.wtarget, &r->w.target_grp);
    } else { /* another node's shared window: this rank takes no part */
        r->w.origin_grp = r->w.target_grp = MPI_GROUP_NULL;
        r->w.wtarget = MPI_PROC_NULL;
    }
    free(o);
    MPI_Group_free(&world);
    MPI_Group_free(&wg);
    if (r->role == ROLE_TARGET) memset(r->w.tmem, 0, total(r));
}

static const char *win_create(struct rma *r, char *why, size_t len)
{
    r->w.wcomm = r->comm;
    r->w.own = r->w.tmem = total(r) ? mb_alloc(total(r)) : NULL;
    int rc = MPI_Win_create(r->w.tmem, (MPI_Aint)total(r), 1, MPI_INFO_NULL, r->w.wcomm, &r->w.win);
    if (agree(r, rc, "MPI_Win_create", why, len)) return why;
    r->w.tdisp = (MPI_Aint)((size_t)(r->oidx > 0 ? r->oidx : 0) * r->region);
    finish_setup(r);
    return NULL;
}

static const char *win_allocate(struct rma *r, char *why, size_t len)
{
    r->w.wcomm = r->comm;
    int rc = MPI_Win_allocate((MPI_Aint)total(r), 1, MPI_INFO_NULL, r->w.wcomm, &r->w.tmem, &r->w.win);
    if (agree(r, rc, "MPI_Win_allocate", why, len)) return why;
    r->w.tdisp = (MPI_Aint)((size_t)(r->oidx > 0 ? r->oidx : 0) * r->region);
    finish_setup(r);
    return NULL;
}

static const char *win_dynamic(struct rma *r, char *why, size_t len)
{
    r->w.wcomm = r->comm;
    int rc = MPI_Win_create_dynamic(MPI_INFO_NULL, r->w.wcomm, &r->w.win);
    if (agree(r, rc, "MPI_Win_create_dynamic", why, len)) return why;
    MPI_Win_set_errhandler(r->w.win, MPI_ERRORS_RETURN);
    MPI_Aint base = 0;
    rc = MPI_SUCCESS;
    if (r->role == ROLE_TARGET) {
        r->w.own = r->w.tmem = mb_alloc(total(r));
        rc = MPI_Win_attach(r->w.win, r->w.tmem, (MPI_Aint)total(r));
        MPI_Get_address(r->w.tmem, &base);
    }
    if (agree(r, rc, "MPI_Win_attach", why, len)) return why;
    MPI_Bcast(&base, 1, MPI_AINT, r->target, r->comm);
    r->w.tdisp = MPI_Aint_add(base, (MPI_Aint)((size_t)(r->oidx > 0 ? r->oidx : 0) * r->region));
    finish_setup(r);
    return NULL;
}

static const char *win_shared(struct rma *r, char *why, size_t len)
{
    MPI_Comm_split_type(r->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &r->w.wcomm);
    MPI_Comm_set_errhandler(r->w.wcomm, MPI_ERRORS_RETURN);
    /* every origin must share the target's node */
    MPI_Group world, node;
    int t, apart = 0, any;
    MPI_Comm_group(r->comm, &world);
    MPI_Comm_group(r->w.wcomm, &node);
    MPI_Group_translate_ranks(world, 1, &r->target, node, &t);
    if (r->role == ROLE_ORIGIN && t == MPI_UNDEFINED) apart = 1;
    MPI_Group_free(&world);
    MPI_Group_free(&node);
    MPI_Allreduce(&apart, &any, 1, MPI_INT, MPI_MAX, r->comm);
    if (any) {
        MPI_Comm_free(&r->w.wcomm);
        snprintf(why, len, "origin and target on different nodes (a shared window spans one node)");
        return why;
    }
    int rc = MPI_Win_allocate_shared((MPI_Aint)total(r), 1, MPI_INFO_NULL, r->w.wcomm, &r->w.tmem, &r->w.win);
    if (agree(r, rc, "MPI_Win_allocate_shared", why, len)) {
        MPI_Comm_free(&r->w.wcomm);
        return why;
    }
    r->w.tdisp = (MPI_Aint)((size_t)(r->oidx > 0 ? r->oidx : 0) * r->region);
    finish_setup(r);
    rc = MPI_SUCCESS;
    if (r->role == ROLE_ORIGIN) {
        MPI_Aint size;
        int du;
        char *base = NULL;
        rc = MPI_Win_shared_query(r->w.win, r->w.wtarget, &size, &du, &base);
        r->w.tremote = base ? base + r->w.tdisp : NULL;
    }
    if (agree(r, rc, "MPI_Win_shared_query", why, len)) return why;
    return NULL;
}

static void destroy(struct rma *r)
{
    if (r->w.own && r->w.wf->create == win_dynamic) MPI_Win_detach(r->w.win, r->w.own);
    MPI_Win_free(&r->w.win);
    if (r->w.origin_grp != MPI_GROUP_NULL) MPI_Group_free(&r->w.origin_grp);
    if (r->w.target_grp != MPI_GROUP_NULL) MPI_Group_free(&r->w.target_grp);
    if (r->w.wcomm != r->comm) MPI_Comm_free(&r->w.wcomm);
    free(r->w.own);
    r->w.own = r->w.tmem = r->w.tremote = NULL;
}

const struct rma_window rma_windows[] = {
    {"create", 0, win_create, destroy},
    {"allocate", 0, win_allocate, destroy},
    {"dynamic", 0, win_dynamic, destroy},
    {"allocate-shared", 1, win_shared, destroy},
    {0},
};

const char *rma_errstr(int code, char *buf, size_t len)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(code, s, &n);
    s[n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1] = 0;
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == ',') *p = ' ';
    snprintf(buf, len, "%s", s);
    return buf;
}
