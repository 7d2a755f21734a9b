/* pingpong: shared types.  One kernel state (struct pp) serves every test:
 * the rank's role (idle, A = the side that starts, B = the side that
 * answers), its peer, the message size, and the buffers it sends from and
 * receives into (one warm buffer each, or a rotating cold pool). */
#ifndef PINGPONG_H
#define PINGPONG_H
#include "mb.h"

enum pp_test { T_LATENCY, T_PINGPING, T_BW, T_BIBW, T_MSGRATE, T_ALLPAIRS, NTEST };
/* the tests' names, once, in enum pp_test's order (--tests, --list, the rows) */
#define PP_TESTS "latency,pingping,bw,bibw,msgrate,allpairs"
extern char pp_test_names[NTEST][16];

enum pp_role { ROLE_IDLE, ROLE_A, ROLE_B };

/* Buffers: nslots slots of `stride` bytes each in the send and receive pools.
 * Warm: one slot, reused by every message (as in OSU).  Cold: the pools are
 * larger than the last-level cache and every message uses the next slot. */
struct pp_bufs {
    unsigned char *spool, *rpool;
    size_t pool_bytes; /* each pool */
    int cold;
};

struct pp {
    MPI_Comm comm; /* private duplicate of the world for the traffic */
    int rank;
    enum pp_role role;
    int peer;
    int count;    /* bytes per message */
    long window;  /* messages per window (bw, bibw, msgrate) */
    size_t stride;
    long nslots, slot; /* next slot used */
    unsigned char *spool, *rpool;
    unsigned char ack[8];
    MPI_Request *req; /* 2 * window */
    long vfirst;      /* --verify: the first slot of the checked iteration */
    int kind;         /* the kernel: T_LATENCY, T_PINGPING, T_BW or T_BIBW */
};

/* kernels.c: the timed regions (run_timed: local seconds per message) and --verify */
void pp_prepare(struct pp *p, const struct pp_bufs *b, int kind, size_t bytes);
struct mb_kernel pp_kernel(struct pp *p, MPI_Comm harness_comm);

/* buffers.c */
size_t pp_llc_bytes(void); /* the last-level cache size, or 32 MiB if unknown */
void pp_bufs_alloc(struct pp_bufs *b, int cold, size_t cache_bytes, size_t size_max);
void pp_bufs_free(struct pp_bufs *b);

/* pairs.c: which pairs to measure, from where ranks live (mb_nodes) */
struct pp_place {
    int nprocs;
    const int *node;    /* node index of every rank (the harness's mb_nodes.node_of) */
    int intra[2];       /* the first node-local pair, or -1 -1 */
    int inter[2];       /* rank 0 and the first rank on another node, or -1 -1 */
};
void pp_place_init(struct pp_place *pl, const struct mb_nodes *nodes, int nprocs);

/* report.c: the OSU-shaped tables (rank 0) */
void pp_report(const struct mb_run *run, const struct pp_place *pl, long window, int cold);
#endif
