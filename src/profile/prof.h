/* libmpimb-prof.so — internal interface (docs/profile.md).
 *
 * The wrappers (wrap.c for C, fortran.c for the Fortran symbols the MPI
 * library does not route through C) are generated from one table, calls.h.
 * Each wrapper: if profiling is off, straight to PMPI; else the accounting
 * "pre" step (sizes, peers, the collective checker, the optional barrier)
 * outside the timed region, one clock pair around the PMPI call, then one
 * update of a preallocated cell [call][size bin].  Nothing is allocated on
 * that path. */
#ifndef MBP_PROF_H
#define MBP_PROF_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "trace.h"

#define MBP_API __attribute__((visibility("default")))

enum mbp_call {
#define MBP_ENUM(name, fam, buf, params, acct) MBP_##name,
    MBP_CALLS(MBP_ENUM)
#undef MBP_ENUM
    MBP_NCALLS
};

enum mbp_family {
    MBP_FAM_P2P,     /* blocking send / receive / sendrecv */
    MBP_FAM_P2PNB,   /* nonblocking point-to-point */
    MBP_FAM_PERS,    /* persistent requests: init, start, free */
    MBP_FAM_PROBE,
    MBP_FAM_WAIT,    /* completion: wait and test */
    MBP_FAM_COLL,    /* blocking collectives (the optional barrier applies) */
    MBP_FAM_COLLNB,  /* nonblocking collectives */
    MBP_FAM_RMA,     /* one-sided communication */
    MBP_FAM_RMASYNC, /* one-sided synchronisation */
    MBP_FAM_RMAWIN,  /* window creation and freeing */
    MBP_NFAMILIES
};

/* Size bins: 0 holds 0-byte calls, k >= 1 holds [2^(k-1), 2^k); MBP_NOSIZE
 * the calls that carry no size (waits, barriers, ...); MBP_ALL is filled at
 * MPI_Finalize with each call's totals over every bin. */
enum { MBP_SIZEBINS = 64, MBP_NOSIZE = MBP_SIZEBINS, MBP_ALL, MBP_NBINS };

struct mbp_cell {
    uint64_t calls, bytes, ticks, sync_ticks;
};

/* Traffic per partner, sender / origin side: [kind][world rank]. */
enum { MBP_MAT_P2P, MBP_MAT_RMA, MBP_NMAT };

struct mbp_state {
    int on;   /* between MPI_Init and MPI_Finalize: wrappers account */
    int mt;   /* MPI_THREAD_MULTIPLE was provided: counters are updated atomically */
    int sync; /* MPIMB_PROF_SYNC=1: a timed barrier before each blocking collective */
    int check; /* MPIMB_PROF_CHECK=1: the collective checker */
    int rank, size;
    MPI_Comm world; /* private duplicate of MPI_COMM_WORLD */
    struct mbp_cell cell[MBP_NCALLS][MBP_NBINS];
    uint64_t *msgs[MBP_NMAT], *bytes[MBP_NMAT]; /* size entries each, allocated at MPI_Init */
    uint64_t coll_seq; /* collectives this rank entered (the checker's call number) */
    uint64_t untracked; /* persistent requests the table had no room for */
};
extern struct mbp_state mbp;

/* What the "pre" step found out about one call. */
struct mbp_acct {
    int bin;
    uint64_t bytes;
    uint64_t sync_ticks;
    int peer, peer_kind; /* the message's partner (world rank, -1: none) and matrix kind, counted if the call succeeds */
};

/* clock.c: the wrappers' clock (invariant TSC, else CLOCK_MONOTONIC in ns) */
extern int mbp_use_tsc;
uint64_t mbp_ticks_slow(void); /* CLOCK_MONOTONIC in ns */
static inline uint64_t mbp_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (mbp_use_tsc) return __builtin_ia32_rdtsc();
#endif
    return mbp_ticks_slow();
}
void mbp_clock_start(void);
double mbp_clock_stop(void); /* seconds per tick, measured over the whole run */
uint64_t mbp_ticks_with(double (*clock)(void), double *at); /* a tick and clock() read together */
const char *mbp_clock_name(void);

static inline int mbp_bin(uint64_t bytes)
{
    if (!bytes) return 0;
    int b = 64 - __builtin_clzll(bytes);
    return b < MBP_SIZEBINS ? b : MBP_SIZEBINS - 1;
}

static inline void mbp_add(uint64_t *p, uint64_t v)
{
    if (mbp.mt)
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    else
        *p += v;
}

static inline void mbp_record(enum mbp_call id, const struct mbp_acct *a, uint64_t ticks)
{
    struct mbp_cell *c = &mbp.cell[id][a->bin];
    mbp_add(&c->calls, 1);
    mbp_add(&c->bytes, a->bytes);
    mbp_add(&c->ticks, ticks);
    if (a->sync_ticks) mbp_add(&c->sync_ticks, a->sync_ticks);
}

/* acct.c: the pre steps of point-to-point and one-sided calls */
void mbp_size(struct mbp_acct *a, int count, MPI_Datatype dt);
void mbp_send(struct mbp_acct *a, int count, MPI_Datatype dt, int dest, MPI_Comm comm);
void mbp_peer_add(const struct mbp_acct *a); /* the call's message into the matrix (once it succeeded) */
void mbp_rma(struct mbp_acct *a, uint64_t bytes, int target, MPI_Win win);
uint64_t mbp_type_bytes(long count, MPI_Datatype dt);
/* requests arrive as C handles (fortran = 0) or Fortran integers (1) */
void mbp_persist_add(const void *req, int fortran, uint64_t bytes, int world_peer);
void mbp_persist_forget(const void *req, int fortran);
uint64_t mbp_req_key(const void *reqs, int fortran, int i); /* a request handle's bits */
uint32_t mbp_comm_id(MPI_Comm comm); /* 0 for MPI_COMM_WORLD, else a hash of its group's world ranks */
void mbp_start(struct mbp_acct *a, const void *reqs, int fortran, int n);
int mbp_world_rank(MPI_Comm comm, int rank); /* -1 for MPI_PROC_NULL and the like */
int mbp_is_in_place(const void *buf);
void mbp_translate_init(void);
int mbp_comm_rank(MPI_Comm comm);

/* coll.c: bytes of one collective call (the collectives program's
 * convention), then the checker and the optional barrier (blocking ones) */
void mbp_c_block(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, int count, MPI_Datatype dt, int root, MPI_Op op);
void mbp_c_barrier(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm);
void mbp_c_gather(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st, int rc,
                  MPI_Datatype rt, int root);
void mbp_c_scatter(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, int sc, MPI_Datatype st, const void *rbuf,
                   int rc, MPI_Datatype rt, int root);
void mbp_c_allg(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st, int rc,
                MPI_Datatype rt);
void mbp_c_gatherv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st,
                   const int *rcounts, MPI_Datatype rt, int root);
void mbp_c_scatterv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *scounts, MPI_Datatype st,
                    const void *rbuf, int rc, MPI_Datatype rt, int root);
void mbp_c_allgatherv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, int sc, MPI_Datatype st,
                      const int *rcounts, MPI_Datatype rt);
void mbp_c_alltoallv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, const int *scounts,
                     MPI_Datatype st, const int *rcounts, MPI_Datatype rt);
void mbp_c_alltoallw(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const void *sbuf, const int *scounts,
                     const void *stypes, const int *rcounts, const void *rtypes, int fortran);
void mbp_c_rscat(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *rcounts, MPI_Datatype dt, MPI_Op op);
void mbp_c_neigh(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, long count, MPI_Datatype dt);
void mbp_c_neighv(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *counts, MPI_Datatype dt);
void mbp_c_neighw(struct mbp_acct *a, enum mbp_call id, MPI_Comm comm, const int *counts, const void *types, int fortran);
void mbp_check_init(void);
extern _Thread_local void *mbp_caller; /* the application's call site (checker) */

/* state.c: start (after PMPI_Init) and finish (before PMPI_Finalize) */
void mbp_start_profile(int required, int provided, double init_seconds);
void mbp_finish_profile(void);
/* A bad setting: one line from rank 0, every rank exits 2, no files. */
_Noreturn void mbp_usage_error(const char *msg);
/* write.c: rank 0 writes the results at the end; collective over mbp.world */
struct mb_run;
struct mb_run *mbp_open_run(int required, int provided, double init_seconds);
void mbp_write_run(struct mb_run *run, double sec_per_tick, double wall);
extern const char *const mbp_call_names[MBP_NCALLS];
extern const enum mbp_family mbp_call_family[MBP_NCALLS];
extern const char *const mbp_family_names[MBP_NFAMILIES];

/* How the accounting of each table entry expands (calls.h: the last field).
 * PRE_x runs before the timed call, POST_x after it; `a` and `id` are the
 * wrapper's locals.  MBP_REQ1 / MBP_REQA / MBP_FORTRAN differ
 * between the C and the Fortran wrappers. */
#define MBP_PRE(acct) MBP_CAT(PRE_, acct)
#define MBP_POST(acct) MBP_CAT(POST_, acct)
#define MBP_CAT(a, b) MBP_CAT_(a, b)
#define MBP_CAT_(a, b) a##b

#define PRE_NONE()
#define POST_NONE()
#define PRE_SEND(count, dt, dest, tag, comm) mbp_send(&a, count, dt, dest, comm)
#define POST_SEND(count, dt, dest, tag, comm)
#define PRE_ISEND(count, dt, dest, tag, comm, req) mbp_send(&a, count, dt, dest, comm)
#define POST_ISEND(count, dt, dest, tag, comm, req)
#define PRE_RECV(count, dt, source, tag, comm) mbp_size(&a, count, dt)
#define POST_RECV(count, dt, source, tag, comm)
#define PRE_IRECV(count, dt, source, tag, comm, req) mbp_size(&a, count, dt)
#define POST_IRECV(count, dt, source, tag, comm, req)
#define PRE_MRECV(count, dt) mbp_size(&a, count, dt)
#define POST_MRECV(count, dt)
#define PRE_SENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt) mbp_send(&a, count, dt, dest, comm)
#define POST_SENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt)
#define PRE_ISENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt, req) mbp_send(&a, count, dt, dest, comm)
#define POST_ISENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt, req)
/* completion: the requests' keys are kept before the call (trace mode, recording) */
#define PRE_WAIT(req) uint64_t *saved = mbp_tracing() ? mbp_trace_save(MBP_REQ1(req), 1) : NULL
#define POST_WAIT(req)
#define PRE_WAITN(n, reqs) uint64_t *saved = mbp_tracing() ? mbp_trace_save(MBP_REQA(reqs), n) : NULL
#define POST_WAITN(n, reqs)
#define PRE_PSEND(count, dt, dest, comm, req) mbp_size(&a, count, dt)
#define POST_PSEND(count, dt, dest, comm, req)                                                      \
    if (rc == MPI_SUCCESS) mbp_persist_add(MBP_REQ1(req), a.bytes, mbp_world_rank(comm, dest))
#define PRE_PRECV(count, dt, req) mbp_size(&a, count, dt)
#define POST_PRECV(count, dt, req)                                                                  \
    if (rc == MPI_SUCCESS) mbp_persist_add(MBP_REQ1(req), a.bytes, -1)
#define PRE_START(req) mbp_start(&a, MBP_REQ1(req), 1)
#define POST_START(req)
#define PRE_STARTALL(n, reqs) mbp_start(&a, MBP_REQA(reqs), n)
#define POST_STARTALL(n, reqs)
#define PRE_RFREE(req) mbp_persist_forget(MBP_REQ1(req))
#define POST_RFREE(req)
#define PRE_RMA(count, dt, target, win) mbp_rma(&a, mbp_type_bytes(count, dt), target, win)
#define POST_RMA(count, dt, target, win)
#define PRE_RMA2(c1, d1, c2, d2, target, win)                                                       \
    mbp_rma(&a, mbp_type_bytes(c1, d1) + mbp_type_bytes(c2, d2), target, win)
#define POST_RMA2(c1, d1, c2, d2, target, win)
#define PRE_BARRIER(comm) mbp_c_barrier(&a, id, comm)
#define POST_BARRIER(comm)
#define PRE_BLOCK(comm, count, dt, root, op) mbp_c_block(&a, id, comm, count, dt, root, op)
#define POST_BLOCK(comm, count, dt, root, op)
#define PRE_GATHER(comm, sb, sc, st, rc, rt, root) mbp_c_gather(&a, id, comm, sb, sc, st, rc, rt, root)
#define POST_GATHER(comm, sb, sc, st, rc, rt, root)
#define PRE_SCATTER(comm, sc, st, rb, rc, rt, root) mbp_c_scatter(&a, id, comm, sc, st, rb, rc, rt, root)
#define POST_SCATTER(comm, sc, st, rb, rc, rt, root)
#define PRE_ALLG(comm, sb, sc, st, rc, rt) mbp_c_allg(&a, id, comm, sb, sc, st, rc, rt)
#define POST_ALLG(comm, sb, sc, st, rc, rt)
#define PRE_GATHERV(comm, sb, sc, st, rcs, rt, root) mbp_c_gatherv(&a, id, comm, sb, sc, st, rcs, rt, root)
#define POST_GATHERV(comm, sb, sc, st, rcs, rt, root)
#define PRE_SCATTERV(comm, scs, st, rb, rc, rt, root) mbp_c_scatterv(&a, id, comm, scs, st, rb, rc, rt, root)
#define POST_SCATTERV(comm, scs, st, rb, rc, rt, root)
#define PRE_ALLGV(comm, sb, sc, st, rcs, rt) mbp_c_allgatherv(&a, id, comm, sb, sc, st, rcs, rt)
#define POST_ALLGV(comm, sb, sc, st, rcs, rt)
#define PRE_ALLTOALLV(comm, sb, scs, st, rcs, rt) mbp_c_alltoallv(&a, id, comm, sb, scs, st, rcs, rt)
#define POST_ALLTOALLV(comm, sb, scs, st, rcs, rt)
#define PRE_ALLTOALLW(comm, sb, scs, sts, rcs, rts)                                                 \
    mbp_c_alltoallw(&a, id, comm, sb, scs, (const void *)(sts), rcs, (const void *)(rts), MBP_FORTRAN)
#define POST_ALLTOALLW(comm, sb, scs, sts, rcs, rts)
#define PRE_RSCAT(comm, rcs, dt, op) mbp_c_rscat(&a, id, comm, rcs, dt, op)
#define POST_RSCAT(comm, rcs, dt, op)
#define PRE_NEIGH(comm, count, dt) mbp_c_neigh(&a, id, comm, count, dt)
#define POST_NEIGH(comm, count, dt)
#define PRE_NEIGHV(comm, counts, dt) mbp_c_neighv(&a, id, comm, counts, dt)
#define POST_NEIGHV(comm, counts, dt)
#define PRE_NEIGHW(comm, counts, types) mbp_c_neighw(&a, id, comm, counts, (const void *)(types), MBP_FORTRAN)
#define POST_NEIGHW(comm, counts, types)

/* Trace mode (trace.h): what each accounting kind records, after the call,
 * while recording.  A kind without TRACE_x here records the call alone. */
#define MBP_TRACE(acct) MBP_CAT(TRACE_, acct)
#define TRACE_NONE() mbp_trace_call(id, t0, t1)
#define TRACE_SEND(count, dt, dest, tag, comm) mbp_trace_msg(id, MBP_EV_SEND, t0, t1, a.bytes, dest, tag, comm, NULL, 0)
#define TRACE_ISEND(count, dt, dest, tag, comm, req)                                                \
    mbp_trace_msg(id, MBP_EV_SEND, t0, t1, a.bytes, dest, tag, comm, MBP_REQ1(req))
#define TRACE_RECV(count, dt, source, tag, comm)                                                    \
    mbp_trace_msg(id, MBP_EV_RECV, t0, t1, a.bytes, source, tag, comm, NULL, 0)
#define TRACE_IRECV(count, dt, source, tag, comm, req)                                              \
    mbp_trace_msg(id, MBP_EV_RECV, t0, t1, a.bytes, source, tag, comm, MBP_REQ1(req))
#define TRACE_SENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt)                      \
    mbp_trace_msg(id, MBP_EV_SEND, t0, t1, a.bytes, dest, stag, comm, NULL, 0);                     \
    mbp_trace_msg(id, MBP_EV_RECV | MBP_EV_PART, t0, t1, mbp_type_bytes(rcount, rdt), source, rtag, comm, NULL, 0)
#define TRACE_ISENDRECV(count, dt, dest, stag, source, rtag, comm, rcount, rdt, req)                \
    mbp_trace_msg(id, MBP_EV_SEND, t0, t1, a.bytes, dest, stag, comm, MBP_REQ1(req));          \
    mbp_trace_msg(id, MBP_EV_RECV | MBP_EV_PART, t0, t1, mbp_type_bytes(rcount, rdt), source, rtag, comm,         \
                  MBP_REQ1(req))
#define TRACE_WAIT(req) mbp_trace_done(id, t0, t1, saved, MBP_REQ1(req), 1)
#define TRACE_WAITN(n, reqs) mbp_trace_done(id, t0, t1, saved, MBP_REQA(reqs), n)
#define TRACE_MRECV(count, dt) TRACE_NONE()
#define TRACE_PSEND(count, dt, dest, comm, req) TRACE_NONE()
#define TRACE_PRECV(count, dt, req) TRACE_NONE()
#define TRACE_START(req) TRACE_NONE()
#define TRACE_STARTALL(n, reqs) TRACE_NONE()
#define TRACE_RFREE(req) TRACE_NONE()
#define TRACE_RMA(count, dt, target, win) TRACE_NONE()
#define TRACE_RMA2(c1, d1, c2, d2, target, win) TRACE_NONE()
#define TRACE_BARRIER(comm) TRACE_NONE()
#define TRACE_BLOCK(comm, count, dt, root, op) TRACE_NONE()
#define TRACE_GATHER(comm, sb, sc, st, rc, rt, root) TRACE_NONE()
#define TRACE_SCATTER(comm, sc, st, rb, rc, rt, root) TRACE_NONE()
#define TRACE_ALLG(comm, sb, sc, st, rc, rt) TRACE_NONE()
#define TRACE_GATHERV(comm, sb, sc, st, rcs, rt, root) TRACE_NONE()
#define TRACE_SCATTERV(comm, scs, st, rb, rc, rt, root) TRACE_NONE()
#define TRACE_ALLGV(comm, sb, sc, st, rcs, rt) TRACE_NONE()
#define TRACE_ALLTOALLV(comm, sb, scs, st, rcs, rt) TRACE_NONE()
#define TRACE_ALLTOALLW(comm, sb, scs, sts, rcs, rts) TRACE_NONE()
#define TRACE_RSCAT(comm, rcs, dt, op) TRACE_NONE()
#define TRACE_NEIGH(comm, count, dt) TRACE_NONE()
#define TRACE_NEIGHV(comm, counts, dt) TRACE_NONE()
#define TRACE_NEIGHW(comm, counts, types) TRACE_NONE()

/* The wrapper body shared by the C and Fortran wrappers: CALL is the
 * library call, which sets the local rc. */
#define MBP_BODY(name, acct, CALL)                                                                  \
    const enum mbp_call id = MBP_##name;                                                            \
    struct mbp_acct a = {.bin = MBP_NOSIZE, .peer = -1};                                            \
    (void)id;                                                                                       \
    if (mbp.check) mbp_caller = __builtin_return_address(0);                                        \
    MBP_PRE(acct);                                                                                  \
    uint64_t t0 = mbp_ticks();                                                                      \
    CALL;                                                                                           \
    uint64_t t1 = mbp_ticks();                                                                      \
    MBP_POST(acct);                                                                                 \
    /* a call that failed (MPI_ERRORS_RETURN) took its time but moved nothing */                    \
    if (rc == MPI_SUCCESS)                                                                          \
        mbp_peer_add(&a);                                                                           \
    else                                                                                            \
        a.bytes = 0;                                                                                \
    mbp_record(id, &a, t1 - t0);                                                                    \
    if (mbp_tracing() && rc == MPI_SUCCESS) {                                                       \
        MBP_TRACE(acct);                                                                            \
    }

#endif
