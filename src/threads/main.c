/* threads — driver: options, the thread teams, per-thread communicators, the
 * tests in order, thread placement and CPU time in the metadata, the stdout
 * tables. */
#include "threads.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define THR_TEST_NAME(e, s) [e] = s,
const char *const thr_test_names[NTESTS] = {THR_TESTS(THR_TEST_NAME)};
#undef THR_TEST_NAME
/* --tests' list: ",a,b,..." from the one table, without its first comma */
#define THR_TEST_LIST(e, s) "," s
static const char test_list[] = THR_TESTS(THR_TEST_LIST);
#undef THR_TEST_LIST

enum { MAX_WORKERS = 1023 };
static int level_idx = 3, level = MPI_THREAD_MULTIPLE, bind, work_idx;
static long nthreads = 2, window = 64, blocks; /* blocks 0: 24, 6 with --quick */
static unsigned long sel_tests, sel_pairing, sel_place;
static size_t short_size = 8, long_size, block_size; /* 0: 1 MiB, 64 KiB with --quick */
static double compute_us, work_us = -1; /* -1: not given */
static const char *workers_arg;
static int workers[MAX_WORKERS], nworkers;

static const struct mb_option options[] = {
    {"level", 0, MB_OPT_CHOICE, &level_idx, 0, 0, MB_THREAD_LEVEL_WORDS,
     "thread level requested in MPI_Init_thread (multiple); the provided one is in the CSV"},
    {"threads", 't', MB_OPT_INT, &nthreads, 1, 1024, NULL, "threads per process T, and processes per side to compare (2)"},
    {"tests", 0, MB_OPT_LIST, &sel_tests, 0, 0, test_list + 1, "tests to run (default: all)"},
    {"pairing", 0, MB_OPT_LIST, &sel_pairing, 0, 0, "tags,comms",
     "how threads of a pair are told apart: distinct tags on one communicator, or one communicator per thread "
     "(default: both)"},
    {"short-size", 0, MB_OPT_SIZE, &short_size, 1, 1 << 20, NULL,
     "bytes of msgrate-mt, short-long short and coll-mt messages (8)"},
    {"long-size", 0, MB_OPT_SIZE, &long_size, 1, 1 << 30, NULL,
     "bytes of bandwidth, long and overlap messages (1M; 64K with --quick)"},
    {"window", 'w', MB_OPT_INT, &window, 1, 4096, NULL, "messages in flight per thread in bw and msgrate tests (64)"},
    {"compute-us", 0, MB_OPT_DOUBLE, &compute_us, 0, 0, NULL,
     "overlap: microseconds of computation (0: as long as the exchange alone takes)"},
    {"bind", 0, MB_OPT_FLAG, &bind, 0, 0, NULL, "pin each thread to its own core of the process's binding (hwloc)"},
    {"placement", 0, MB_OPT_LIST, &sel_place, 0, 0, "same-pu,smt-sibling,other-core,unbound",
     "overlap: also run serial, comm-thread and spmd with the communication thread (spmd: the second process) at "
     "each of these places relative to the compute thread (hwloc)"},
    {"blocks", 0, MB_OPT_INT, &blocks, 1, 10000, NULL, "master-worker: blocks farmed out per iteration (24; 6 with --quick)"},
    {"block-size", 0, MB_OPT_SIZE, &block_size, 1, 64 << 20, NULL, "master-worker: bytes per block (1M; 64K with --quick)"},
    {"work", 0, MB_OPT_CHOICE, &work_idx, 0, 0, "bzip2,spin",
     "master-worker: what a worker does with a block: compress it with libbz2, or spin for --work-us (bzip2)"},
    {"work-us", 0, MB_OPT_DOUBLE, &work_us, 0, 0, NULL, "master-worker --work spin: microseconds per block (0)"},
    {"workers", 0, MB_OPT_STRING, &workers_arg, 0, 0, NULL, "master-worker: worker counts, e.g. 1,2,4 (1 ... N-1)"},
    {0},
};


/* "--workers 1,3,2" -> workers[] = {1, 2, 3}; NULL or the message. */
static const char *parse_workers(void)
{
    static char msg[160];
    nworkers = 0;
    if (!workers_arg) return NULL;
    char seen[MAX_WORKERS + 1] = {0};
    for (const char *p = workers_arg; p;) {
        const char *comma = strchr(p, ',');
        char word[24];
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        long long v;
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
        if (n >= sizeof word || mb_parse_long(word, 1, MAX_WORKERS, &v)) {
            snprintf(msg, sizeof msg, "--workers must be a comma-separated list of worker counts from 1 to %d, got '%s'",
                     MAX_WORKERS, workers_arg);
            return msg;
        }
        seen[v] = 1;
        p = comma ? comma + 1 : NULL;
    }
    for (int w = 1; w <= MAX_WORKERS; w++)
        if (seen[w]) workers[nworkers++] = w;
    return NULL;
}

static const char *validate(void)
{
    level = mb_thread_level_of(level_idx);
    if (work_us >= 0 && work_idx != 1) return "--work-us needs --work spin";
    return parse_workers();
}

static void list(void)
{
    printf("tests:");
    for (int i = 0; i < NTESTS; i++) printf(" %s", thr_test_names[i]);
    printf("\nmethods:\n  overhead-*: the requested level (" MB_THREAD_LEVEL_WORDS ")\n"
           "  latency-mt bw-mt msgrate-mt: threads-tags threads-comms processes\n"
           "  short-long: alone with-long\n"
           "  overlap: comm-only compute-only plain comm-thread comm-thread-wait; with --placement: serial "
           "comm-thread spmd\n"
           "  coll-mt: allreduce-concurrent allreduce-sequential bcast-concurrent bcast-sequential\n"
           "  master-worker: mpi-only comm-threads worker-overlap\n");
}

static const struct mb_program program = {
    .name = "threads",
    .summary = "multithreaded MPI: thread-level overhead, T threads vs T processes, short+long, overlap (and where "
               "the communication thread sits), concurrent collectives, master-worker farming",
    .options = options,
    .flags = MB_USES_SIZES,
    .size_min = 8,
    .size_max = 1024,
    .quick_size_max = 8,
    .thread_level = MPI_THREAD_MULTIPLE,
    .thread_level_var = &level,
    .threads_var = &nthreads,
    .list = list,
    .validate = validate,
};

/* "MPI_THREAD_MULTIPLE" from the results' name of the level */
static const char *level_macro(int l, char *buf, size_t len)
{
    int n = snprintf(buf, len, "MPI_THREAD_%s", mb_thread_level_name(l));
    for (int i = 11; i < n && (size_t)i < len; i++) buf[i] = (char)toupper((unsigned char)buf[i]);
    return buf;
}

const char *thr_level_short(const struct thr *c, int need, char *buf, size_t len)
{
    if (c->run->thread_level >= need) return NULL;
    char macro[32];
    snprintf(buf, len, "needs %s, library provided %s", level_macro(need, macro, sizeof macro),
             mb_thread_level_name(c->run->thread_level));
    return buf;
}

void thr_pair(const struct mb_run *run, int *role, int *partner)
{
    int half = run->nprocs / 2;
    *role = run->rank == 0 ? 0 : run->rank == half ? 1 : -1;
    *partner = *role == 0 ? half : *role == 1 ? 0 : -1;
}

/* Every rank's thread placement, gathered to rank 0, into the metadata. */
static void placement_meta(struct thr *c)
{
    struct mb_run *run = c->run;
    int n = mb_team_size(c->team);
    size_t per = (size_t)n * 176 + 64; /* one thread: < 64 bytes of JSON + two strings < 48 */
    char *mine = calloc(per, 1), *all = NULL;
    mb_team_placement(c->team, mine, per);
    if (run->rank == 0) all = calloc((size_t)run->nprocs, per);
    MPI_Gather(mine, (int)per, MPI_CHAR, all, (int)per, MPI_CHAR, 0, run->world);
    int bound = mb_team_bound(c->team), allbound;
    MPI_Reduce(&bound, &allbound, 1, MPI_INT, MPI_MIN, 0, run->world);
    if (run->rank == 0) {
        size_t cap = (size_t)run->nprocs * (per + 64) + 256, k = 0;
        char *js = malloc(cap);
        k += (size_t)snprintf(js + k, cap - k, "{\"bind\": %s, \"bound\": %s, \"team_threads\": %d, \"ranks\": [",
                              bind ? "true" : "false", allbound ? "true" : "false", n);
        for (int r = 0; r < run->nprocs; r++)
            k += (size_t)snprintf(js + k, cap - k, "%s\n    {\"rank\": %d, \"threads\": %s}", r ? "," : "", r,
                                  all + (size_t)r * per);
        snprintf(js + k, cap - k, "]}");
        mb_meta_add(run, "thread_placement", js);
        free(js);
    }
    free(mine);
    free(all);
}

/* The rows test t makes over the plan: the sizes it sweeps times its variants, or its methods. */
static int rows_of(const struct thr *c, int t)
{
    int nvar = 0, nplace = 0;
    for (int v = 0; v < MT_NVAR; v++) nvar += thr_mt_variant(c, v);
    for (int p = 0; p < MB_NPLACE; p++) nplace += (int)(c->placement >> p & 1);
    switch (t) {
    case T_OVH_LAT: return c->nsizes;
    case T_LAT_MT: return c->nsizes * nvar;
    case T_BW_MT:
    case T_RATE_MT: return nvar; /* at one size: --long-size, --short-size */
    case T_SHORT_LONG: return SL_NMETH;
    case T_OVERLAP: return OV_NMETH + PL_NMETH * nplace; /* the methods, then the placement study's */
    case T_COLL_MT: return COLL_NMETH;
    case T_MASTER_WORKER: return MW_NMETH * (c->nworkers > 0 ? c->nworkers : 1);
    default: return 1; /* overhead-bw: at --long-size */
    }
}

/* What the run measures, with the options resolved: the sizes (c->sizes, the sweeping tests iterate them),
 * and the rows of the selected tests, counted from the plan once: the progress line's total. */
static int plan(struct thr *c)
{
    c->nsizes = mb_sizes(&c->run->opts, c->sizes);
    int n = 0;
    for (int t = 0; t < NTESTS; t++) n += (sel_tests >> t & 1) ? rows_of(c, t) : 0;
    return n;
}

int main(int argc, char **argv)
{
    struct mb_run *run = mb_init(&argc, &argv, &program);
    struct thr c = {.run = run, .T = (int)nthreads, .short_size = short_size, .window = window,
                    .compute_us = compute_us};
    c.long_size = long_size ? long_size : run->opts.quick ? 64 * 1024 : 1024 * 1024;
    if (!sel_tests) sel_tests = (1ul << NTESTS) - 1;
    if (!sel_pairing) sel_pairing = 3;
    c.pair_tags = sel_pairing & 1;
    c.pair_comms = (sel_pairing >> 1) & 1;
    c.placement = sel_place;
    c.blocks = blocks ? blocks : run->opts.quick ? 6 : 24;
    c.block_size = block_size ? block_size : run->opts.quick ? 64 * 1024 : 1024 * 1024;
    c.spin = work_idx == 1;
    c.work_us = work_us > 0 ? work_us : 0;
    if (!nworkers) /* default: 1 ... N-1 */
        for (int w = 1; w < run->nprocs && w <= MAX_WORKERS; w++) workers[nworkers++] = w;
    c.workers = workers;
    c.nworkers = nworkers;
    if ((sel_tests >> T_MASTER_WORKER & 1) && nworkers && workers[nworkers - 1] >= run->nprocs)
        mb_usage_error(run, "--workers %d needs %d ranks (a master and %d workers), the job has %d",
                       workers[nworkers - 1], workers[nworkers - 1] + 1, workers[nworkers - 1], run->nprocs);

    /* at least two threads: short-long and overlap use a second one */
    /* threads of co-located ranks spread over the node (--bind); is the pair 0, N/2 on one node? */
    int lrank = run->nodes.local_rank, same_node = run->nodes.node_of[0] == run->nodes.node_of[run->nprocs / 2];
    c.team = mb_team_create(c.T > 2 ? c.T : 2, bind, lrank * (c.T > 2 ? c.T : 2));
    MPI_Comm_dup(run->world, &c.shared);
    MPI_Comm_dup(run->world, &c.longcomm);
    c.percomm = malloc((size_t)c.T * sizeof *c.percomm);
    for (int t = 0; t < c.T; t++) MPI_Comm_dup(run->world, &c.percomm[t]);
    /* master-worker comm-threads: the master's own team, one thread per worker */
    if (run->rank == 0 && (sel_tests >> T_MASTER_WORKER & 1) && nworkers && workers[nworkers - 1] > 1)
        c.mteam = mb_team_create(workers[nworkers - 1], bind, 0);
    int slots = mb_team_size(c.team);
    if (c.mteam && mb_team_size(c.mteam) > slots) slots = mb_team_size(c.mteam);
    MPI_Allreduce(&slots, &c.cpu_slots, 1, MPI_INT, MPI_MAX, run->world);

    run->ntotal = plan(&c);
    for (int j = 0; j < NTESTS; j++) { /* --order shuffle: the tests (and the *-mt variants) */
        const int t = mb_order(run, 0, NTESTS, j, 0);
        if (!(sel_tests >> t & 1)) continue;
        if (t == T_OVH_LAT || t == T_OVH_BW)
            thr_overhead(&c, t == T_OVH_BW);
        else if (t <= T_RATE_MT)
            thr_mt(&c, t);
        else if (t == T_SHORT_LONG)
            thr_short_long(&c);
        else if (t == T_OVERLAP)
            thr_overlap(&c);
        else if (t == T_COLL_MT)
            thr_coll(&c);
        else
            thr_master_worker(&c);
    }

    placement_meta(&c);
    thr_cpu_meta(&c);
    char meta[640];
    snprintf(meta, sizeof meta,
             "{\"requested_level\": \"%s\", \"provided_level\": \"%s\", \"threads\": %d, \"short_size\": %zu, "
             "\"long_size\": %zu, \"window\": %ld, \"compute_us\": %g, \"pair\": [0, %d], \"pair_same_node\": %s}",
             mb_thread_level_name(level), mb_thread_level_name(run->thread_level), c.T, c.short_size, c.long_size, c.window,
             c.compute_us, run->nprocs / 2, same_node ? "true" : "false");
    mb_meta_add(run, "threads", meta);
    if (run->rank == 0) thr_report(&c);

    for (int t = 0; t < c.T; t++) MPI_Comm_free(&c.percomm[t]);
    free(c.percomm);
    MPI_Comm_free(&c.shared);
    MPI_Comm_free(&c.longcomm);
    mb_team_destroy(c.team);
    mb_team_destroy(c.mteam);
    free(c.cpu_json);
    return mb_finish(run);
}
