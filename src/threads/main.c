/* threads — driver: options, the thread team, per-thread communicators, the
 * tests in order, thread placement in the metadata, the stdout tables. */
#include "threads.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const thr_test_names[NTESTS] = {"overhead-latency", "overhead-bw", "latency-mt", "bw-mt",
                                            "msgrate-mt",       "short-long",  "overlap",    "coll-mt"};

static int level_idx = 3, level = MPI_THREAD_MULTIPLE, bind;
static long nthreads = 2, window = 64;
static unsigned long sel_tests, sel_pairing;
static size_t short_size = 8, long_size; /* 0: 1 MiB, 64 KiB with --quick */
static double compute_us;

static const struct mb_option options[] = {
    {"level", 0, MB_OPT_CHOICE, &level_idx, 0, 0, "single,funneled,serialized,multiple",
     "thread level requested in MPI_Init_thread (multiple); the provided one is in the CSV"},
    {"threads", 't', MB_OPT_INT, &nthreads, 1, 1024, NULL, "threads per process T, and processes per side to compare (2)"},
    {"tests", 0, MB_OPT_LIST, &sel_tests, 0, 0,
     "overhead-latency,overhead-bw,latency-mt,bw-mt,msgrate-mt,short-long,overlap,coll-mt", "tests to run (default: all)"},
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
    {0},
};

static const int levels[4] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};

static const char *validate(void)
{
    level = levels[level_idx];
    return NULL;
}

static void list(void)
{
    printf("tests:");
    for (int i = 0; i < NTESTS; i++) printf(" %s", thr_test_names[i]);
    printf("\nmethods:\n  overhead-*: the requested level (single funneled serialized multiple)\n"
           "  latency-mt bw-mt msgrate-mt: threads-tags threads-comms processes\n"
           "  short-long: alone with-long\n"
           "  overlap: comm-only compute-only plain comm-thread comm-thread-wait\n"
           "  coll-mt: allreduce-concurrent allreduce-sequential bcast-concurrent bcast-sequential\n");
}

static const struct mb_program program = {
    .name = "threads",
    .summary = "multithreaded MPI: thread-level overhead, T threads vs T processes, short+long, overlap, "
               "concurrent collectives",
    .options = options,
    .flags = MB_USES_SIZES,
    .size_min = 8,
    .size_max = 1024,
    .quick_size_max = 8,
    .thread_level = MPI_THREAD_MULTIPLE,
    .thread_level_var = &level,
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

    /* at least two threads: short-long and overlap use a second one */
    /* threads of co-located ranks spread over the node (--bind); is the pair 0, N/2 on one node? */
    int lrank = run->nodes.local_rank, same_node = run->nodes.node_of[0] == run->nodes.node_of[run->nprocs / 2];
    c.team = mb_team_create(c.T > 2 ? c.T : 2, bind, lrank * (c.T > 2 ? c.T : 2));
    MPI_Comm_dup(run->world, &c.shared);
    MPI_Comm_dup(run->world, &c.longcomm);
    c.percomm = malloc((size_t)c.T * sizeof *c.percomm);
    for (int t = 0; t < c.T; t++) MPI_Comm_dup(run->world, &c.percomm[t]);

    run->ntotal = thr_count_rows(&c, sel_tests);
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
        else
            thr_coll(&c);
    }

    placement_meta(&c);
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
    return mb_finish(run);
}
