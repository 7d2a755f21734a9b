/* pingpong — point-to-point latency, ping-ping, bandwidth, bidirectional
 * bandwidth, multi-pair message rate and an all-pairs matrix, over message
 * sizes, defined as osu_latency / osu_bw / osu_bibw / osu_mbw_mr / IMB
 * PingPing define them, measured by the common harness (barrier-started
 * repetitions, median and its 95 % CI, adaptive repetitions). */
#include "pingpong.h"

#include <stdlib.h>
#include <string.h>

char pp_test_names[NTEST][16]; /* from PP_TESTS */

static unsigned long sel_tests, sel_pairs;
static long window = 64;
static int cache_choice; /* 0 warm, 1 cold */
static size_t cache_bytes = (size_t)-1, ap_lat = (size_t)-1, ap_bw = (size_t)-1; /* -1: not given */

#define MAX_MSG ((long long)1 << 30)

static const struct mb_option options[] = {
    {"tests", 't', MB_OPT_LIST, &sel_tests, 0, 0, PP_TESTS,
     "tests to run (default: all)"},
    {"window", 'W', MB_OPT_INT, &window, 1, 4096, NULL, "messages in flight per window for bw, bibw, msgrate (64)"},
    {"cache", 0, MB_OPT_CHOICE, &cache_choice, 0, 0, "warm,cold",
     "warm: reuse one buffer (as OSU); cold: rotate through pools larger than the last-level cache (warm)"},
    {"cache-bytes", 0, MB_OPT_SIZE, &cache_bytes, 4096, (long long)1 << 36, NULL,
     "cache size that --cache cold must exceed (default: the last-level cache size)"},
    {"pairs", 0, MB_OPT_LIST, &sel_pairs, 0, 0, "intra,inter",
     "pair placements for latency, pingping, bw, bibw (default: every one that exists)"},
    {"allpairs-latency-size", 0, MB_OPT_SIZE, &ap_lat, 0, MAX_MSG, NULL, "message size of allpairs-latency (8)"},
    {"allpairs-bw-size", 0, MB_OPT_SIZE, &ap_bw, 0, MAX_MSG, NULL,
     "message size of allpairs-bw (1M; 64K with --quick)"},
    {0},
};

static void list(void)
{
    char w[16];
    printf("tests:");
    for (int t = 0; t < NTEST; t++) printf(" %s", mb_word(PP_TESTS, t, w, sizeof w));
    printf("\n"
           "  (allpairs writes allpairs-latency and allpairs-bw rows)\n"
           "pairs: intra inter\ncache: warm cold\n");
}

static const struct mb_program program = {
    .name = "pingpong",
    .summary = "point-to-point latency, ping-ping, bandwidth, bidirectional bandwidth, message rate and an all-pairs "
               "matrix, over message sizes (as osu_latency/osu_bw/osu_bibw/osu_mbw_mr)",
    .options = options,
    .flags = MB_USES_SIZES,
    .size_min = 0,
    .size_max = (size_t)4 << 20,
    .quick_size_max = (size_t)64 << 10,
    .thread_level = MPI_THREAD_SINGLE,
    .list = list,
    /* ±1 % on a quiet node in no more time than osu_latency's sweep (bench/pingpong/README.md): repetitions
     * of 50 us mostly fall between the kernel's timer ticks, so their median is that of undisturbed ones */
    .rel_ci = 0.01,
    .sweep_budget = 1.4,
    .min_rep_time = 5e-5,
};

/* --------------------------------------------------------------- driver */

struct ctx {
    struct mb_run *run;
    struct pp p;
    struct pp_bufs bufs;
    const char *variant; /* row method for non-allpairs rows: "" or "cold" */
};

/* Sets the roles: each (a[i], b[i]) is a pair, a[i] starts; others idle. */
static void roles(struct ctx *c, int npairs, const int *a, const int *b)
{
    c->p.role = ROLE_IDLE;
    c->p.peer = MPI_PROC_NULL;
    for (int i = 0; i < npairs; i++) {
        if (c->p.rank == a[i]) c->p.role = ROLE_A, c->p.peer = b[i];
        if (c->p.rank == b[i]) c->p.role = ROLE_B, c->p.peer = a[i];
    }
}

static void measure(struct ctx *c, const char *test, const char *method, const char *comm, int kind, size_t bytes,
                    struct mb_sweep *sw)
{
    struct mb_row row;
    mb_row_init(&row, test, method);
    snprintf(row.comm, sizeof row.comm, "%s", comm);
    row.threads = 1;
    row.bytes = (long long)bytes;
    row.sent_bytes = (double)bytes;
    if (kind != T_LATENCY && kind != T_PINGPING) mb_param_opt(c->run, &row, "window");
    if (c->variant[0]) mb_param_opt(c->run, &row, "cache-bytes");
    mb_begin(c->run, &row);
    pp_prepare(&c->p, &c->bufs, kind, bytes);
    struct mb_kernel k = pp_kernel(&c->p, c->run->world);
    k.sweep = sw;
    mb_measure(c->run, &k, &row);
    mb_end(c->run, &row);
}

static void not_available(struct ctx *c, const char *test, const char *comm, const char *why)
{
    struct mb_row row;
    mb_row_init(&row, test, c->variant);
    snprintf(row.comm, sizeof row.comm, "%s", comm);
    row.threads = 1;
    mb_begin(c->run, &row);
    mb_na(c->run, &row, "%s", why);
    mb_end(c->run, &row);
}

/* What this run measures, resolved once from the options: the sizes and the pair placements.  The loops
 * below iterate it, and the progress line's total is counted from it (plan_rows). */
struct plan {
    size_t sizes[MB_MAX_SIZES];
    int nsizes;
    const int *pair[2]; /* intra, inter: the pair of latency, pingping, bw and bibw ({-1, -1}: none) */
    int use[2];         /* measured: selected (--pairs) and there */
    int na[2];          /* one n/a row per test instead: named by --pairs, but not there */
    int npairs, nap;    /* msgrate's pairs (i <-> i + P/2); allpairs' pairs */
};

static void plan(const struct mb_run *run, const struct pp_place *place, int explicit_pairs, struct plan *pn)
{
    pn->nsizes = mb_sizes(&run->opts, pn->sizes);
    pn->pair[0] = place->intra;
    pn->pair[1] = place->inter;
    for (int i = 0; i < 2; i++) {
        pn->use[i] = (sel_pairs >> i & 1) && pn->pair[i][0] >= 0;
        pn->na[i] = !pn->use[i] && explicit_pairs && (sel_pairs >> i & 1);
    }
    pn->npairs = run->nprocs / 2;
    pn->nap = run->nprocs * (run->nprocs - 1) / 2;
}

static int plan_rows(const struct plan *pn)
{
    int n = 0;
    for (int t = T_LATENCY; t <= T_BIBW; t++)
        for (int i = 0; i < 2 && (sel_tests >> t & 1); i++) n += pn->use[i] ? pn->nsizes : pn->na[i];
    if (sel_tests >> T_MSGRATE & 1) n += pn->nsizes;
    if (sel_tests >> T_ALLPAIRS & 1) n += 2 * pn->nap;
    return n;
}

/* msgrate: pairs i <-> i + P/2 all at once; with P odd the last rank idles */
static void msgrate(struct ctx *c, const struct pp_place *pl, const struct plan *pn, char *mr_comm)
{
    const int npairs = pn->npairs;
    int *a = malloc((size_t)npairs * sizeof *a), *b = malloc((size_t)npairs * sizeof *b), nin = 0;
    for (int i = 0; i < npairs; i++) {
        a[i] = i;
        b[i] = i + npairs;
        nin += pl->node[a[i]] == pl->node[b[i]];
    }
    snprintf(mr_comm, 8, "%s", nin == npairs ? "intra" : nin == 0 ? "inter" : "mixed");
    roles(c, npairs, a, b);
    struct mb_sweep sw = {0};
    for (int j = 0; j < pn->nsizes; j++) measure(c, "msgrate", c->variant, mr_comm, T_BW, pn->sizes[j], &sw);
    free(a);
    free(b);
}

/* allpairs: every pair, one at a time, latency then bandwidth */
static void allpairs(struct ctx *c, const struct pp_place *pl)
{
    for (int a = 0; a < c->run->nprocs; a++)
        for (int b = a + 1; b < c->run->nprocs; b++) {
            char method[48];
            snprintf(method, sizeof method, "%d-%d", a, b);
            roles(c, 1, &a, &b);
            const char *where = pl->node[a] == pl->node[b] ? "intra" : "inter";
            measure(c, "allpairs-latency", method, where, T_LATENCY, ap_lat, NULL);
            measure(c, "allpairs-bw", method, where, T_BW, ap_bw, NULL);
        }
}

/* "[a, b]" or "null" */
static const char *pair_json(char *buf, size_t len, const int *p)
{
    if (p[0] < 0) return "null";
    snprintf(buf, len, "[%d, %d]", p[0], p[1]);
    return buf;
}

int main(int argc, char **argv)
{
    for (int t = 0; t < NTEST; t++) mb_word(PP_TESTS, t, pp_test_names[t], sizeof pp_test_names[t]);
    struct mb_run *run = mb_init(&argc, &argv, &program);
    const struct mb_opts *o = &run->opts;
    if (run->nprocs < 2) mb_usage_error(run, "needs at least 2 processes, got %d", run->nprocs);
    if ((long long)o->size_max > MAX_MSG)
        mb_usage_error(run, "--sizes: messages are at most 1G bytes, got a maximum of %zu", o->size_max);
    if (!sel_tests) sel_tests = (1ul << NTEST) - 1;
    sel_tests &= (1ul << NTEST) - 1;
    int explicit_pairs = sel_pairs != 0;
    if (!sel_pairs) sel_pairs = 3;
    if (ap_lat == (size_t)-1) ap_lat = 8;
    if (ap_bw == (size_t)-1) ap_bw = o->quick ? (size_t)64 << 10 : (size_t)1 << 20;
    if (cache_bytes == (size_t)-1) cache_bytes = pp_llc_bytes();

    struct ctx c = {.run = run, .variant = cache_choice ? "cold" : ""};
    MPI_Comm_dup(run->world, &c.p.comm);
    c.p.rank = run->rank;
    c.p.window = window;
    c.p.req = malloc(2 * (size_t)window * sizeof *c.p.req);
    struct pp_place pl;
    pp_place_init(&pl, &run->nodes, run->nprocs);
    size_t biggest = o->size_max;
    if ((sel_tests >> T_ALLPAIRS & 1) && ap_lat > biggest) biggest = ap_lat;
    if ((sel_tests >> T_ALLPAIRS & 1) && ap_bw > biggest) biggest = ap_bw;
    pp_bufs_alloc(&c.bufs, cache_choice, cache_bytes, biggest);

    static const char *const pname[2] = {"intra", "inter"}; /* the placements of latency/pingping/bw/bibw */
    struct plan pn;
    plan(run, &pl, explicit_pairs, &pn);
    run->ntotal = plan_rows(&pn);
    char mr_comm[8] = "intra";
    for (int jt = 0; jt < NTEST; jt++) { /* --order shuffle: tests, and pair placements within each */
        const int t = mb_order(run, 0, NTEST, jt, 0);
        if (!(sel_tests >> t & 1)) continue;
        if (t == T_MSGRATE) {
            msgrate(&c, &pl, &pn, mr_comm);
            continue;
        }
        if (t == T_ALLPAIRS) {
            allpairs(&c, &pl);
            continue;
        }
        for (int ji = 0; ji < 2; ji++) {
            const int i = mb_order(run, 1, 2, ji, 0);
            if (pn.na[i])
                not_available(&c, pp_test_names[t], pname[i],
                              i ? "every rank is on one node: no inter-node pair"
                                : "no two ranks share a node: no intra-node pair");
            if (!pn.use[i]) continue;
            roles(&c, 1, &pn.pair[i][0], &pn.pair[i][1]);
            struct mb_sweep sw = {0};
            for (int j = 0; j < pn.nsizes; j++)
                measure(&c, pp_test_names[t], c.variant, pname[i], t, pn.sizes[j], &sw);
        }
    }

    char meta[1024], pj[2][32];
    snprintf(meta, sizeof meta,
             "{\"window\": %ld, \"cache\": \"%s\", \"cache_bytes\": %zu, \"pool_bytes\": %zu, "
             "\"intra_pair\": %s, \"inter_pair\": %s, \"msgrate_pairs\": %d, \"msgrate_comm\": \"%s\", "
             "\"idle_rank\": %d, \"allpairs_latency_bytes\": %zu, \"allpairs_bw_bytes\": %zu, "
             "\"latency\": \"half round trip\", \"time_per\": \"message\", \"ack_bytes\": 4}",
             window, cache_choice ? "cold" : "warm", cache_bytes, c.bufs.pool_bytes,
             pair_json(pj[0], sizeof pj[0], pl.intra), pair_json(pj[1], sizeof pj[1], pl.inter), pn.npairs, mr_comm, run->nprocs % 2 ? run->nprocs - 1 : -1, ap_lat, ap_bw);
    mb_meta_add(run, "pingpong", meta);
    if (run->rank == 0) pp_report(run, &pl, window, cache_choice);
    pp_bufs_free(&c.bufs);
    free(c.p.req);
    MPI_Comm_free(&c.p.comm);
    return mb_finish(run);
}
