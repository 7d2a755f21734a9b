/* libmpimb-prof.so, trace mode (docs/profile.md, "Trace mode"): every
 * wrapped call of a recording stretch becomes an event in a bounded buffer
 * of the calling thread; at MPI_Finalize the clocks are aligned to rank 0's
 * (src/common/sync.c) and rank 0 writes one Chrome trace-event JSON
 * (docs/results-format.md, "Traces").
 *
 * Recording follows MPI_Pcontrol: 0 off, 1 on.  The suite's own levels (the
 * programs' --trace, src/common/tracing.c) carry MBP_PCONTROL_KEY first: a
 * call of one of these levels without it (an application's, whose
 * arguments are unknown) is ignored, its arguments never read past the key.
 *   MPI_Pcontrol(MBP_PCONTROL_RUN, KEY, const char *run_id, const char *path)
 *   MPI_Pcontrol(MBP_PCONTROL_TEST, KEY, const char *test_json)  names the next stretch
 *   MPI_Pcontrol(MBP_PCONTROL_DISCARD, KEY)                       no trace file at the end
 *   MPI_Pcontrol(MBP_PCONTROL_FINISH, KEY, int *status, char *err) the trace written now
 *       (collective); rank 0's *status: 0 written, 1 not (why in err, MBP_ERR_LEN bytes)
 * Without the profiler these are MPI's no-op MPI_Pcontrol. */
#ifndef MBP_TRACE_H
#define MBP_TRACE_H

#include <stdint.h>

#include "pcontrol.h" /* the suite's MPI_Pcontrol levels: the harness calls them (src/common) */

#include <mpi.h>

/* One event: 56 bytes (bench/trace). */
enum mbp_tev_kind {
    MBP_EV_CALL,  /* a call: a slice [t0, t1] */
    MBP_EV_SEND,  /* a call that sends one message (req: its request, 0 blocking) */
    MBP_EV_RECV,  /* a call that posts one receive (req: its request, 0 blocking: done at t1) */
    MBP_EV_DONE,  /* request req completed in the call [t0, t1] (not a slice of its own) */
    MBP_EV_PART = 0x80 /* flag: the second message of the previous event's call (Sendrecv) */
};
struct mbp_tev {
    uint64_t t0, t1; /* ticks (mbp_ticks); at the end: ns of rank 0's clock since the trace's origin */
    uint64_t req;    /* request key (mbp_req_key), 0: none */
    uint64_t bytes;
    uint32_t comm;   /* the communicator: 0 MPI_COMM_WORLD, else a hash of its group (world ranks, in order) */
    int32_t peer, wpeer, tag; /* partner's rank in comm and in world (-1: none / wildcard), tag */
    uint16_t call;   /* enum mbp_call */
    uint8_t kind, tid;
    uint32_t pad;
};

extern int mbp_trace_rec; /* recording now (trace mode, between MPI_Pcontrol(1) and (0)) */
/* read by every thread's wrappers, set by MPI_Pcontrol in any thread */
static inline int mbp_tracing(void) { return __atomic_load_n(&mbp_trace_rec, __ATOMIC_RELAXED); }

void mbp_trace_init(void);   /* MPI_Init: the settings (exits 2 on a bad one) */
void mbp_trace_finish(const char *profile_run_id); /* MPI_Finalize, collective over mbp.world */
const char *mbp_trace_path(void); /* the trace's file (MPIMB_PROF_TRACE), NULL if none is named */
/* level, and the suite's levels' arguments (NULL for others) */
void mbp_trace_pcontrol(int level, const char *a, const char *b, int *status, char *err);

/* the hooks of the wrappers (prof.h, TRACE_*): they run only while recording */
void mbp_trace_call(int id, uint64_t t0, uint64_t t1);
void mbp_trace_msg(int id, int kind, uint64_t t0, uint64_t t1, uint64_t bytes, int peer, int tag, MPI_Comm comm,
                   const void *req, int fortran);
uint64_t *mbp_trace_save(const void *reqs, int fortran, int n); /* request keys before a wait / test */
void mbp_trace_done(int id, uint64_t t0, uint64_t t1, const uint64_t *saved, const void *reqs, int fortran, int n);
#endif
