/* threads — the Thakur–Gropp tests of multithreaded MPI: the cost of a thread
 * level for a single-threaded program, T threads versus T processes
 * (latency, bandwidth, message rate), short messages beside long ones,
 * communication/computation overlap with a communication thread, and
 * concurrent collectives on per-thread communicators. */
#ifndef THREADS_H
#define THREADS_H

#include "mb.h"
#include "team.h"

enum { T_OVH_LAT, T_OVH_BW, T_LAT_MT, T_BW_MT, T_RATE_MT, T_SHORT_LONG, T_OVERLAP, T_COLL_MT, NTESTS };
extern const char *const thr_test_names[NTESTS];

/* What every test sees: the run, the options, the team, the communicators. */
struct thr {
    struct mb_run *run;
    struct mb_team *team;
    int T;                  /* --threads */
    int pair_tags, pair_comms; /* --pairing */
    size_t short_size, long_size;
    long window;
    double compute_us;      /* 0: as long as the communication */
    MPI_Comm shared;        /* one dup of world: distinct tags per thread */
    MPI_Comm *percomm;      /* T dups of world: one per thread */
    MPI_Comm longcomm;      /* short-long: the long traffic */
    struct {                /* overlap % per method, rank 0, for metadata and table */
        double comm, compute, plain, thread_test, thread_wait;
    } ov;
};

/* The reason a test needing `need` cannot run at the provided level, or NULL. */
const char *thr_level_short(const struct thr *c, int need, char *buf, size_t len);
/* The pair of the two-party tests: rank 0 (role 0) and rank N/2 (role 1);
 * every other rank gets role -1. */
void thr_pair(const struct mb_run *run, int *role, int *partner);

void thr_overhead(struct thr *c, int bw);
void thr_mt(struct thr *c, int test);
void thr_short_long(struct thr *c);
void thr_overlap(struct thr *c);
void thr_coll(struct thr *c);
int thr_count_rows(const struct thr *c, unsigned long tests);

void thr_report(const struct thr *c);

#endif
