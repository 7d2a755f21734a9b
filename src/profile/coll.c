/* Collectives: the bytes of one call (the collectives program's convention:
 * the block one process contributes), then, when asked for, the collective
 * checker (MPIMB_PROF_CHECK=1) and the FPMPI-style barrier that measures how
 * long a rank waited for the others (MPIMB_PROF_SYNC=1, blocking ones only).
 *
 * The checker: before the library sees the call, every rank of the
 * communicator exchanges (on a private duplicate, with PMPI calls) what it
 * brings — the call, root, operation, its block's bytes and basic datatype,
 * the arrays that must agree — and a mismatch is printed with each rank's
 * call number and call site, then the job is aborted, where the library
 * would hang or silently compute a wrong result. */
#include "prof.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Thread_local void *mbp_caller;

struct rec {
    int32_t call, root, op;
    int32_t block;     /* 1: bytes and datatype must be equal on every rank */
    int32_t world;     /* world rank */
    int32_t pad;
    uint64_t bytes;    /* the block this rank brings (the row's size) */
    uint64_t typesig;  /* hash of its basic datatype's name; 0: none or mixed */
    uint64_t vec;      /* hash of an array every rank must pass identically; 0: none */
    uint64_t seq;      /* this rank's collective call number */
    char type[24];     /* the basic datatype's name */
    char site[96];     /* where it was called from */
};

/* ------------------------------------------------ bytes */

static int inter(MPI_Comm comm)
{
    int f = 0;
    PMPI_Comm_test_inter(comm, &f);
    return f;
}

/* ranks whose arrays a v-collective reads (the remote group on an intercommunicator) */
static int peers(MPI_Comm comm)
{
    int n = 0;
    inter(comm) ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n);
    return n;
}

static MPI_Datatype type_at(const void *types, int fortran, int i)
{
    return fortran ? PMPI_Type_f2c(((const MPI_Fint *)types)[i]) : ((const MPI_Datatype *)types)[i];
}

static int outdegree(MPI_Comm comm)
{
    int topo = MPI_UNDEFINED, n = 0, in = 0, weighted = 0;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, mbp_comm_rank(comm), &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted);
    return n;
}

static void set_bytes(struct mbp_acct *a, uint64_t bytes)
{
    a->bytes = bytes;
    a->bin = mbp_bin(bytes);
}

/* ------------------------------------------------ the checker */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* The basic datatype every element of dt is made of (MPI_DATATYPE_NULL if
 * they differ): the part of the type signature the checker compares. */
static MPI_Datatype basic_of(MPI_Datatype dt)
{
    int ni = 0, na = 0, nd = 0, comb = 0;
    PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED || nd == 0) return dt;
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc(((size_t)na + 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)nd * sizeof *types), b = MPI_DATATYPE_NULL;
    PMPI_Type_get_contents(dt, ni, na, nd, ints, aints, types);
    int mixed = 0;
    for (int i = 0; i < nd; i++) {
        MPI_Datatype bi = basic_of(types[i]);
        if (bi == MPI_DATATYPE_NULL || (b != MPI_DATATYPE_NULL && bi != b)) mixed = 1;
        b = bi;
        int c2 = 0;
        PMPI_Type_get_envelope(types[i], &ni, &na, &nd, &c2);
        if (c2 != MPI_COMBINER_NAMED) PMPI_Type_free(&types[i]);
    }
    free(ints), free(aints), free(types);
    return mixed ? MPI_DATATYPE_NULL : b;
}

static void signature(struct rec *r, MPI_Datatype dt)
{
    if (dt == MPI_DATATYPE_NULL || !r->bytes) return;
    MPI_Datatype b = basic_of(dt);
    if (b == MPI_DATATYPE_NULL) {
        snprintf(r->type, sizeof r->type, "mixed types");
        return;
    }
    int len = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    PMPI_Type_get_name(b, name, &len);
    snprintf(r->type, sizeof r->type, "%.*s", (int)sizeof r->type - 1, len ? name : "a derived type"); /* cut to fit */
    r->typesig = fnv(1469598103934665603ull, name, (size_t)len) | 1;
}

static const struct {
    MPI_Op op;
    const char *name;
} ops[] = {{MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},       {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},
           {MPI_LAND, "MPI_LAND"}, {MPI_BAND, "MPI_BAND"},     {MPI_LOR, "MPI_LOR"},       {MPI_BOR, "MPI_BOR"},
           {MPI_LXOR, "MPI_LXOR"}, {MPI_BXOR, "MPI_BXOR"},     {MPI_MAXLOC, "MPI_MAXLOC"}, {MPI_MINLOC, "MPI_MINLOC"},
           {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}};
enum { NOPS = sizeof ops / sizeof *ops, USER_OP = 99 };

static int op_index(MPI_Op op)
{
    if (op == MPI_OP_NULL) return 0;
    for (int i = 0; i < NOPS; i++)
        if (ops[i].op == op) return i + 1;
    return USER_OP; /* user-defined: handles are not comparable across processes */
}

static const char *op_name(int i) { return i == 0 ? "-" : i == USER_OP ? "user-defined" : ops[i - 1].name; }

static void call_site(char *buf, size_t len)
{
    Dl_info d;
    void *pc = mbp_caller;
    if (pc && dladdr(pc, &d) && d.dli_fname) {
        const char *f = strrchr(d.dli_fname, '/') ? strrchr(d.dli_fname, '/') + 1 : d.dli_fname;
        if (d.dli_sname)
            snprintf(buf, len, "%s(%s+0x%tx)", f, d.dli_sname, (char *)pc - (char *)d.dli_saddr);
        else
            snprintf(buf, len, "%s+0x%tx", f, (char *)pc - (char *)d.dli_fbase);
    } else
        snprintf(buf, len, "%p", pc);
}

/* The private duplicate the checker talks on: an attribute of comm. */
static int dup_key = MPI_KEYVAL_INVALID;
static int free_dup(MPI_Comm c, int k, void *v, void *x)
{
    (void)c, (void)k, (void)x;
    MPI_Comm d = *(MPI_Comm *)v;
    PMPI_Comm_free(&d);
    free(v);
    return MPI_SUCCESS;
}

void mbp_check_init(void) { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_dup, &dup_key, NULL); }

static MPI_Comm private_dup(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD) return mbp.world;
    MPI_Comm *d = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, dup_key, &d, &found);
    if (!found) {
        d = malloc(sizeof *d);
        PMPI_Comm_dup(comm, d);
        PMPI_Comm_set_attr(comm, dup_key, d);
    }
    return *d;
}

/* One verdict per checked call: the lowest rank that found a problem
 * prints it and aborts the job; the others wait for that. */
static void verdict(MPI_Comm dup, const char *problem)
{
    int me = 0, n = 0, first = 0;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    int who = problem ? me : n;
    PMPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, dup);
    if (first == n) return;
    if (first == me) {
        fprintf(stderr, "%smpimb-prof: MPIMB_PROF_CHECK: aborting the job here instead of letting the library hang "
                        "or compute a wrong result\n", problem);
        fflush(stderr);
        /* MPICH's launcher may tear the job down before it forwards this rank's last output (seen once in
         * a full test run: the abort, no message): give the line a moment to travel */
        struct timespec moment = {0, 300000000}; /* (a variable: smpicc's nanosleep is a macro) */
        nanosleep(&moment, NULL);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    sleep(60); /* the reporting rank aborts the job meanwhile */
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

static int describe(char *buf, size_t len, const struct rec *r)
{
    int n = snprintf(buf, len, "  world rank %d: collective call #%" PRIu64 ", %s", r->world, r->seq,
                     mbp_call_names[r->call]);
    if (r->root >= 0) n += snprintf(buf + n, len - (size_t)n, " root=%d", r->root);
    if (r->op) n += snprintf(buf + n, len - (size_t)n, " op=%s", op_name(r->op));
    if (r->block) n += snprintf(buf + n, len - (size_t)n, ", %" PRIu64 " B%s%s", r->bytes, r->type[0] ? " of " : "", r->type);
    n += snprintf(buf + n, len - (size_t)n, ", called from %s\n", r->site);
    return n;
}

/* Renders the mismatch (malloc'd): the fields that differ and each rank's call. */
static char *mismatch(MPI_Comm comm, const struct rec *all, int n, const char *what)
{
    size_t len = 512 + 256 * (size_t)(n < 16 ? n : 16);
    char *m = malloc(len);
    int k = snprintf(m, len, "mpimb-prof: MPIMB_PROF_CHECK: collective mismatch on %s (%d ranks): %s\n",
                     comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "a communicator", n, what);
    for (int i = 0, shown = 0; i < n && (size_t)k < len - 300; i++) {
        if (shown == 16) {
            k += snprintf(m + k, len - (size_t)k, "  ... (%d more ranks)\n", n - i);
            break;
        }
        k += describe(m + k, len - (size_t)k, &all[i]);
        shown++;
    }
    return m;
}

/* Stage one: every rank's record to every rank; returns them (malloc'd) or
 * NULL when the checker does not apply (an intercommunicator). */
static struct rec *exchange(MPI_Comm comm, struct rec *mine, MPI_Comm *dup, int *n)
{
    if (inter(comm)) return NULL;
    *dup = private_dup(comm);
    PMPI_Comm_size(*dup, n);
    mine->world = mbp.rank;
    call_site(mine->site, sizeof mine->site);
    struct rec *all = malloc((size_t)*n * sizeof *all);
    PMPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, *dup);
    return all;
}

/* What must agree on every rank: the call, root, operation, and for block
 * collectives the block's bytes and basic datatype; vec where given. */
static const char *disagree(const struct rec *all, int n)
{
    for (int i = 1; i < n; i++) {
        const struct rec *a = &all[0], *b = &all[i];
        if (a->call != b->call) return "different collective calls";
        if (a->root != b->root) return "different roots";
        if (a->op != b->op) return "different reduction operations";
        if (a->vec != b->vec) return "different count arrays (every rank must pass the same)";
        if (a->block && a->bytes != b->bytes) return "different message sizes (count x datatype size)";
        if (a->block && a->typesig && b->typesig && a->typesig != b->typesig) return "different datatype signatures";
    }
    return NULL;
}

/* A full check for calls whose records say everything (extra: NULL), or
 * stage one of the v-collectives, whose extra check needs the records. */
typedef const char *(*extra_check)(const struct rec *all, int n, void *arg);

static void check(MPI_Comm comm, enum mbp_call id, struct rec *mine, MPI_Datatype dt, extra_check extra, void *arg)
{
    mine->call = (int32_t)id;
    mine->seq = mbp.coll_seq;
    signature(mine, dt);
    MPI_Comm dup;
    int n = 0;
    struct rec *all = exchange(comm, mine, &dup, &n);
    if (!all) return;
    const char *what = disagree(all, n);
    if (!what && extra) what = extra(all, n, arg);
    char *msg = what ? mismatch(comm, all, n, what) : NULL;
    free(all);
    verdict(dup, msg);
    free(msg);
}

static void sync_barrier(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm)
{
    if (!mbp.sync || mbp_call_family[id] != MBP_FAM_COLL) return;
    uint64_t t0 = mbp_ticks();
    PMPI_Barrier(comm);
    a->sync_ticks = mbp_ticks() - t0;
}

/* Every collective helper ends here: count it, check it, synchronise. */
static void finish(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, struct rec *r, MPI_Datatype dt,
                   extra_check extra, void *arg)
{
    if (mbp.check) {
        mbp_add(&mbp.coll_seq, 1);
        check(comm, id, r, dt, extra, arg);
    }
    sync_barrier(a, id, comm);
}

/* ------------------------------------------------ the collectives */

void mbp_c_barrier(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm)
{
    struct rec r = {.root = -1};
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, NULL, NULL);
}

void mbp_c_block(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, int count, MPI_Datatype dt, int root, MPI_Op op)
{
    set_bytes(a, mbp_type_bytes(count, dt));
    struct rec r = {.root = root, .op = op_index(op), .block = 1, .bytes = a->bytes};
    finish(a, id, comm, &r, dt, NULL, NULL);
}

static int is_root(MPI_Comm comm, int root) { return root == MPI_ROOT || (!inter(comm) && root == mbp_comm_rank(comm)); }

void mbp_c_gather(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st, int rc,
                  MPI_Datatype rt, int root)
{
    int at_root = is_root(comm, root);
    (void)sbuf; /* at the root the block is the receive side, in place or not */
    set_bytes(a, at_root ? mbp_type_bytes(rc, rt) : mbp_type_bytes(sc, st));
    struct rec r = {.root = root, .block = 1, .bytes = a->bytes};
    finish(a, id, comm, &r, at_root ? rt : st, NULL, NULL);
}

void mbp_c_scatter(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, int sc, MPI_Datatype st, const void *rbuf,
                   int rc, MPI_Datatype rt, int root)
{
    int at_root = is_root(comm, root);
    (void)rbuf;
    set_bytes(a, at_root ? mbp_type_bytes(sc, st) : mbp_type_bytes(rc, rt));
    struct rec r = {.root = root, .block = 1, .bytes = a->bytes};
    finish(a, id, comm, &r, at_root ? st : rt, NULL, NULL);
}

void mbp_c_allg(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st, int rc,
                MPI_Datatype rt)
{
    int in_place = mbp_is_in_place(sbuf);
    set_bytes(a, in_place ? mbp_type_bytes(rc, rt) : mbp_type_bytes(sc, st));
    struct rec r = {.root = -1, .block = 1, .bytes = a->bytes};
    finish(a, id, comm, &r, in_place ? rt : st, NULL, NULL);
}

/* v-collectives: counts[i] x size against what rank i brings */
struct vexpect {
    const int *counts;
    uint64_t size;
    int active; /* this rank holds the counts (the root of gatherv / scatterv) */
};

static _Thread_local char detail[300]; /* the v-collectives' findings */

static const char *match_counts(const struct rec *all, int n, void *arg)
{
    const struct vexpect *e = arg;
    if (!e->active) return NULL;
    for (int i = 0; i < n; i++) {
        uint64_t want = (uint64_t)(e->counts[i] > 0 ? e->counts[i] : 0) * e->size;
        if (want != all[i].bytes) {
            snprintf(detail, sizeof detail, "world rank %d's counts say %" PRIu64 " B for world rank %d, which has %" PRIu64
                     " B (count x datatype size)", mbp.rank, want, all[i].world, all[i].bytes);
            return detail;
        }
    }
    return NULL;
}

static uint64_t type_size(MPI_Datatype dt) { return mbp_type_bytes(1, dt); }

/* gatherv / scatterv: this rank's own block, unless the root's is in place
 * (then the root's entry of its counts); the root checks every rank's. */
static void rooted_v(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *in_place_buf,
                     const int *counts, MPI_Datatype counts_type, int own, MPI_Datatype own_type, int root)
{
    int at_root = is_root(comm, root), me = mbp_comm_rank(comm);
    int in_place = at_root && mbp_is_in_place(in_place_buf) && !inter(comm);
    set_bytes(a, in_place ? (uint64_t)counts[me] * type_size(counts_type) : mbp_type_bytes(own, own_type));
    struct rec r = {.root = root, .bytes = a->bytes};
    struct vexpect e = {counts, at_root && mbp.check ? type_size(counts_type) : 0, at_root};
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, match_counts, &e);
}

void mbp_c_gatherv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st,
                   const int *rcounts, MPI_Datatype rt, int root)
{
    rooted_v(a, id, comm, sbuf, rcounts, rt, sc, st, root);
}

void mbp_c_scatterv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *scounts, MPI_Datatype st,
                    const void *rbuf, int rc, MPI_Datatype rt, int root)
{
    rooted_v(a, id, comm, rbuf, scounts, st, rc, rt, root);
}

static uint64_t counts_hash(const int *counts, int n, uint64_t size)
{
    uint64_t h = fnv(1469598103934665603ull, &size, sizeof size);
    return fnv(h, counts, (size_t)n * sizeof *counts) | 1;
}

void mbp_c_allgatherv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st,
                      const int *rcounts, MPI_Datatype rt)
{
    int me = mbp_comm_rank(comm), in_place = mbp_is_in_place(sbuf) && !inter(comm);
    set_bytes(a, in_place ? (uint64_t)rcounts[me] * type_size(rt) : mbp_type_bytes(sc, st));
    struct rec r = {.root = -1, .bytes = a->bytes};
    struct vexpect e = {rcounts, 0, 0};
    if (mbp.check && !inter(comm)) {
        e = (struct vexpect){rcounts, type_size(rt), 1};
        r.vec = counts_hash(rcounts, peers(comm), e.size);
    }
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, match_counts, &e);
}

/* alltoallv / alltoallw: what each rank sends to each other rank must be
 * what that one expects from it — a second exchange (an alltoall). */
struct a2a {
    const int *scounts, *rcounts;
    const void *stypes, *rtypes; /* alltoallw: arrays; alltoallv: NULL, sizes below */
    MPI_Datatype st, rt;
    int fortran, in_place;
    MPI_Comm comm;
};

static uint64_t a2a_bytes(const int *counts, const void *types, MPI_Datatype dt, int fortran, int i)
{
    return (uint64_t)(counts[i] > 0 ? counts[i] : 0) * type_size(types ? type_at(types, fortran, i) : dt);
}

static const char *match_a2a(const struct rec *all, int n, void *arg)
{
    const struct a2a *x = arg;
    uint64_t *send = malloc(2 * (size_t)n * sizeof *send), *got = send + n;
    for (int i = 0; i < n; i++)
        send[i] = x->in_place ? a2a_bytes(x->rcounts, x->rtypes, x->rt, x->fortran, i)
                              : a2a_bytes(x->scounts, x->stypes, x->st, x->fortran, i);
    PMPI_Alltoall(send, 1, MPI_UINT64_T, got, 1, MPI_UINT64_T, private_dup(x->comm));
    const char *what = NULL;
    for (int i = 0; i < n && !what; i++) {
        uint64_t want = a2a_bytes(x->rcounts, x->rtypes, x->rt, x->fortran, i);
        if (got[i] != want) {
            snprintf(detail, sizeof detail, "world rank %d expects %" PRIu64 " B from world rank %d, which sends it %"
                     PRIu64 " B (count x datatype size)", mbp.rank, want, all[i].world, got[i]);
            what = detail;
        }
    }
    free(send);
    return what;
}

static void alltoall_vw(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, struct a2a *x)
{
    int n = peers(comm);
    x->in_place = mbp_is_in_place(sbuf);
    x->comm = comm;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += x->in_place ? a2a_bytes(x->rcounts, x->rtypes, x->rt, x->fortran, i)
                             : a2a_bytes(x->scounts, x->stypes, x->st, x->fortran, i);
    set_bytes(a, bytes);
    struct rec r = {.root = -1, .bytes = bytes};
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, match_a2a, x);
}

void mbp_c_alltoallv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, const int *scounts,
                     MPI_Datatype st, const int *rcounts, MPI_Datatype rt)
{
    struct a2a x = {.scounts = scounts, .rcounts = rcounts, .st = st, .rt = rt};
    alltoall_vw(a, id, comm, sbuf, &x);
}

void mbp_c_alltoallw(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, const int *scounts,
                     const void *stypes, const int *rcounts, const void *rtypes, int fortran)
{
    struct a2a x = {.scounts = scounts, .rcounts = rcounts, .stypes = stypes, .rtypes = rtypes, .fortran = fortran};
    alltoall_vw(a, id, comm, sbuf, &x);
}

void mbp_c_rscat(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *rcounts, MPI_Datatype dt, MPI_Op op)
{
    int me = mbp_comm_rank(comm);
    set_bytes(a, me >= 0 ? mbp_type_bytes(rcounts[me], dt) : 0);
    struct rec r = {.root = -1, .op = op_index(op), .bytes = a->bytes};
    if (mbp.check && !inter(comm)) r.vec = counts_hash(rcounts, peers(comm), type_size(dt));
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, NULL, NULL);
}

/* Neighbourhood collectives: counts legitimately differ between ranks, so
 * the checker compares only the call. */
void mbp_c_neigh(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, long count, MPI_Datatype dt)
{
    set_bytes(a, mbp_type_bytes(count, dt));
    struct rec r = {.root = -1};
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, NULL, NULL);
}

/* neighbor_alltoallv / w: the sum over this rank's out-neighbours */
static void neigh_sum(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *counts, const void *types,
                      MPI_Datatype dt, int fortran)
{
    uint64_t bytes = 0;
    for (int i = 0, n = outdegree(comm); i < n; i++) bytes += a2a_bytes(counts, types, dt, fortran, i);
    set_bytes(a, bytes);
    struct rec r = {.root = -1};
    finish(a, id, comm, &r, MPI_DATATYPE_NULL, NULL, NULL);
}

void mbp_c_neighv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *counts, MPI_Datatype dt)
{
    neigh_sum(a, id, comm, counts, NULL, dt, 0);
}

void mbp_c_neighw(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *counts, const void *types, int fortran)
{
    neigh_sum(a, id, comm, counts, types, MPI_DATATYPE_NULL, fortran);
}
