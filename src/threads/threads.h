/* threads — the Thakur–Gropp tests of multithreaded MPI: the cost of a thread
 * level for a single-threaded program, T threads versus T processes
 * (latency, bandwidth, message rate), short messages beside long ones,
 * communication/computation overlap with a communication thread (and where
 * that thread sits: --placement), concurrent collectives on per-thread
 * communicators, and master-worker farming with communication threads. */
#ifndef THREADS_H
#define THREADS_H

#include <string.h>

#include "mb.h"
#include "team.h"

/* The tests, once: their index, their name (the CSV's test column, --tests). */
#define THR_TESTS(X)                                                                                              \
    X(T_OVH_LAT, "overhead-latency") X(T_OVH_BW, "overhead-bw") X(T_LAT_MT, "latency-mt") X(T_BW_MT, "bw-mt")     \
    X(T_RATE_MT, "msgrate-mt") X(T_SHORT_LONG, "short-long") X(T_OVERLAP, "overlap") X(T_COLL_MT, "coll-mt")       \
    X(T_MASTER_WORKER, "master-worker")
#define THR_TEST_ENUM(e, s) e,
enum { THR_TESTS(THR_TEST_ENUM) NTESTS };
#undef THR_TEST_ENUM
extern const char *const thr_test_names[NTESTS];
/* Whether a row's test column names test t. */
static inline int thr_test_is(const char *test, int t) { return !strcmp(test, thr_test_names[t]); }
/* Each test's methods (its rows, but for the sizes it sweeps), counted once: the plan (main.c) counts rows
 * from them.  The *-mt tests' variants: threads-tags, threads-comms, processes (thr_mt_variant: --pairing). */
enum { MT_NVAR = 3, SL_NMETH = 2 /* alone, with-long */, OV_NMETH = 5 /* overlap.h */, COLL_NMETH = 4 };
enum { MW_NMETH = 3 };
extern const char *const thr_mw_names[MW_NMETH]; /* mpi-only comm-threads worker-overlap */
enum { PL_NMETH = 3 };
extern const char *const thr_pl_names[PL_NMETH]; /* serial comm-thread spmd */

/* What every test sees: the run, the options, the team, the communicators. */
struct thr {
    struct mb_run *run;
    size_t sizes[MB_MAX_SIZES]; /* the plan: the sizes overhead-latency and latency-mt sweep (-m) */
    int nsizes;
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
    unsigned long placement; /* --placement: bit mb_place; 0: no placement study */
    struct {                 /* per placement, rank 0: why it cannot be done, binding obtained */
        char why[200], bound[160];
    } place[MB_NPLACE];
    /* master-worker */
    struct mb_team *mteam;   /* rank 0: one thread per worker (comm-threads); NULL elsewhere */
    long blocks;
    size_t block_size;
    int spin;                /* --work spin */
    double work_us;
    int *workers, nworkers;  /* the worker counts, ascending */
    /* per-thread CPU time (cpu.c), rank 0 */
    int cpu_slots;           /* most threads any rank's team has */
    double last_wall;        /* rank 0's wall seconds in the last thr_measure */
    char *cpu_json;          /* the JSON array being built: per row */
    size_t cpu_len;
};

/* The reason a test needing `need` cannot run at the provided level, or NULL. */
const char *thr_level_short(const struct thr *c, int need, char *buf, size_t len);
/* The pair of the two-party tests: rank 0 (role 0) and rank N/2 (role 1);
 * every other rank gets role -1. */
void thr_pair(const struct mb_run *run, int *role, int *partner);
/* Whether variant v (0 threads-tags, 1 threads-comms, 2 processes) of the *-mt tests runs (--pairing). */
static inline int thr_mt_variant(const struct thr *c, int v) { return v == 2 || (v == 0 ? c->pair_tags : c->pair_comms); }

/* mb_measure, with CPU time: row->cpu_pct is rank 0's threads' CPU time over
 * their wall time in every call of the kernel (team: this rank's team), and
 * every rank's per-thread figures go to the JSON (thread_cpu). */
int thr_measure(struct thr *c, struct mb_team *team, const struct mb_kernel *k, struct mb_row *row);
void thr_cpu_meta(struct thr *c);
/* Appends text to a growing string (rank 0's JSON pieces). */
void thr_append(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The computation of overlap and of master-worker's spin: the harness's
 * mb_work (n multiply-adds) at mb_work_rate (overlap.c). */

void thr_overhead(struct thr *c, int bw);
void thr_mt(struct thr *c, int test);
void thr_short_long(struct thr *c);
void thr_overlap(struct thr *c);
void thr_coll(struct thr *c);
void thr_master_worker(struct thr *c);

void thr_report(const struct thr *c);
/* The stdout tables of the two studies (report_study.c). */
void thr_report_placement(const struct thr *c);
void thr_report_master_worker(const struct thr *c);

char *thr_fmt(const char *f, double v);
/* The row of test/method (bytes < 0: any size; params NULL: any) that rank 0 kept. */
const struct mb_row *thr_find(const struct mb_run *run, const char *test, const char *method, long long bytes,
                              const char *params);

#endif
