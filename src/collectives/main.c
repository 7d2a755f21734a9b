/* collectives — the library's collectives (blocking and nonblocking),
 * user-level broadcast algorithms beside MPI_Bcast, and the series test
 * (m broadcasts in a loop vs a pipelined chain), over message sizes, with
 * two timing methods and two root placements. */
#include "coll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* --tests words: a word's bit = its position in this list.  A collective's
 * name selects the library's call and, for bcast, reduce and allreduce, its
 * two-level forms too; "bcast-2level" etc. select one two-level method. */
#define LIB_TESTS                                                                                                  \
    "barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall,reduce_scatter_block,scan"
#define NB_TESTS                                                                                                   \
    "ibarrier,ibcast,ireduce,iallreduce,igather,iscatter,iallgather,ialltoall,ireduce_scatter_block,iscan"
#define ALG_TESTS "bcast-binomial,bcast-chain,bcast-tree-pipelined,bcast-scatter-allgather,series"
#define TWO_TESTS                                                                                                  \
    "bcast-2level,bcast-2level-shm,reduce-2level,reduce-2level-shm,allreduce-2level,allreduce-2level-shm"
#define PERSIST_TESTS                                                                                              \
    "barrier-persistent,bcast-persistent,reduce-persistent,allreduce-persistent,allgather-persistent,"              \
    "alltoall-persistent"
#define ALL_TESTS LIB_TESTS "," NB_TESTS "," ALG_TESTS "," TWO_TESTS "," PERSIST_TESTS
enum { NLIB = 10, MAX_ROOTS = 8 };

static unsigned long sel_tests, sel_comms;
static const char *root_arg = "same";
static int timing = 0; /* 0 osu, 1 subtract */
static size_t segment = 8192;
static long messages = 8;
static const char *alg_arg; /* --algorithms */
static const char *tuning_arg; /* --tuning */

/* --root: a list of same | rotate | N, each a set of rows of the rooted tests */
struct root {
    int rotate, rank;   /* rank: the fixed root (same = 0) */
    char word[16];      /* as written: "same", "rotate", "3" */
    char param[16];     /* the rows' root parameter: "0", "rotate", "3" */
};
static struct root roots[MAX_ROOTS];
static int nroots;

static const struct mb_option options[] = {
    {"tests", 't', MB_OPT_LIST, &sel_tests, 0, 0, ALL_TESTS, "collectives and algorithms to run (default: all)"},
    {"comms", 0, MB_OPT_LIST, &sel_comms, 0, 0, COLL_COMMS,
     "communicators: MPI_COMM_WORLD itself, a duplicate, its two halves, each node (world)"},
    {"root", 0, MB_OPT_STRING, &root_arg, 0, 0, NULL,
     "roots of rooted operations, a list of: same (rank 0), rotate (call number mod ranks), a rank number (same)"},
    {"timing", 0, MB_OPT_CHOICE, &timing, 0, 0, "osu,subtract",
     "osu: per-call time, barrier between calls; subtract: (collective+barrier loop) - barrier loop (osu)"},
    {"segment", 0, MB_OPT_SIZE, &segment, 1, 1ll << 30, NULL,
     "segment size of the pipelined chain and tree broadcasts (8K)"},
    {"messages", 0, MB_OPT_INT, &messages, 1, 65536, NULL, "series test: number m of successive messages (8)"},
    {"algorithms", 0, MB_OPT_STRING, &alg_arg, 0, 0, NULL,
     "library: instead of the tests, every algorithm the MPI library lists (MPI_T) for bcast, reduce, allreduce, "
     "allgather, alltoall, barrier, forced in turn; or a list of the library's algorithm names"},
    {"tuning", 0, MB_OPT_STRING, &tuning_arg, 0, 0, NULL,
     "FILE: load this tuning file (mpimb-report tune) into the library: Open MPI coll_tuned rules or MPICH "
     "selection JSON"},
    {0},
};

static const char *validate(void)
{
    static char msg[200];
    if (alg_arg) {
        if (!*alg_arg) return "--algorithms needs 'library' or a list of the library's algorithm names";
        if (timing) return "--algorithms measures with --timing osu (each call timed alone)";
        if (strchr(root_arg, ',')) return "--algorithms takes one --root";
        coll_algs_prepare_env(); /* before MPI_Init */
    }
    if (tuning_arg) {
        const char *why = coll_tuning_use(tuning_arg);
        if (why) return why;
    }
    nroots = 0;
    for (const char *p = root_arg; p;) {
        const char *c = strchr(p, ',');
        int n = c ? (int)(c - p) : (int)strlen(p);
        struct root r = {0};
        long long v;
        snprintf(r.word, sizeof r.word, "%.*s", n, p);
        if (n >= (int)sizeof r.word || !n) {
            snprintf(msg, sizeof msg, "--root must be a list of same, rotate or rank numbers, got '%s'", root_arg);
            return msg;
        }
        if (!strcmp(r.word, "same")) {
            snprintf(r.param, sizeof r.param, "0");
        } else if (!strcmp(r.word, "rotate")) {
            r.rotate = 1;
            snprintf(r.param, sizeof r.param, "rotate");
        } else if (!mb_parse_long(r.word, 0, INT_MAX, &v)) {
            r.rank = (int)v;
            snprintf(r.param, sizeof r.param, "%d", r.rank);
        } else {
            snprintf(msg, sizeof msg, "--root must be same, rotate or a rank number, got '%s'", r.word);
            return msg;
        }
        for (int i = 0; i < nroots; i++)
            if (!strcmp(roots[i].param, r.param)) {
                snprintf(msg, sizeof msg, "--root lists root %s twice ('%s' and '%s')", r.param, roots[i].word,
                         r.word);
                return msg;
            }
        if (nroots == MAX_ROOTS) {
            snprintf(msg, sizeof msg, "--root lists more than %d roots", MAX_ROOTS);
            return msg;
        }
        roots[nroots++] = r;
        p = c ? c + 1 : NULL;
    }
    return NULL;
}

static void list(void)
{
    printf("tests (--tests):\n  blocking:    %s\n  nonblocking: %s\n  algorithms:  %s\n  two-level:   %s\n"
           "  persistent:  %s\n",
           LIB_TESTS, NB_TESTS, ALG_TESTS, TWO_TESTS, PERSIST_TESTS);
    printf("methods (CSV): library; bcast: binomial, chain, tree-pipelined, scatter-allgather, 2level, 2level-shm; "
           "reduce, allreduce: 2level, 2level-shm; series: bcast-loop, chain; persistent (the MPI-4 form of "
           "barrier, bcast, reduce, allreduce, allgather, alltoall)\n");
    printf("comms: %s\nroot: same, rotate, N (a list)\ntiming: osu, subtract\n", COLL_COMMS);
}

static const struct mb_program program = {
    .name = "collectives",
    .summary = "MPI collectives (blocking and nonblocking), user-level broadcast algorithms, two-level (node-aware) "
               "collectives and the series test, time per call over message sizes",
    .options = options,
    .flags = MB_USES_SIZES | MB_WINDOW_BY_DEFAULT | MB_OVERLAP,
    .size_min = 0,
    .size_max = 1 << 20,
    .quick_size_max = 4096,
    .thread_level = MPI_THREAD_SINGLE,
    .list = list,
    .validate = validate,
};

/* ------------------------------------------------------------ the tests */

struct test {
    const struct coll_op *op;
    int nb;              /* the nonblocking form */
    unsigned long sel;   /* the --tests words that select it */
    char name[32];
};
static struct test tests[2 * NLIB + 32];
static int ntests;

static unsigned long word_bit(const char *w) { return 1ul << mb_choice_index(ALL_TESTS, w, strlen(w)); }

static void add_tests(const struct coll_op *ops)
{
    for (int i = 0; ops[i].test; i++) {
        const struct coll_op *op = &ops[i];
        int lib = !strcmp(op->method, "library");
        for (int nb = 0; nb <= (lib && (op->flags & COLL_NB) ? 1 : 0); nb++) {
            struct test *t = &tests[ntests++];
            char word[64];
            if (lib || !strcmp(op->test, "series"))
                snprintf(word, sizeof word, "%s%s", nb ? "i" : "", op->test);
            else
                snprintf(word, sizeof word, "%s-%s", op->test, op->method);
            *t = (struct test){op, nb, word_bit(word), ""};
            if (strstr(op->method, "2level")) t->sel |= word_bit(op->test);
            snprintf(t->name, sizeof t->name, "%s%s", nb ? "i" : "", op->test);
        }
    }
}

/* ------------------------------------------------------------ one test */

/* --timing subtract: the barrier-only medians, for the JSON */
static double ref_min, ref_max;
static int nref;

/* The row of test t at b bytes on communicator c (root rt: NULL for a test that takes none). */
static void describe(struct mb_run *run, struct mb_row *row, const struct coll_state *s, const struct test *t,
                     size_t b, const struct coll_comm *c, const struct root *rt)
{
    const struct coll_op *op = t->op;
    mb_row_init(row, t->name, op->method);
    snprintf(row->comm, sizeof row->comm, "%s", c->name);
    mb_param_opt(run, row, "timing");
    if (tuning_arg) mb_param(row, "tuning", "%s", coll_tuning_name);
    if (rt) mb_param(row, "root", "%s", rt->param); /* --root same and --root 0 measure the same thing */
    if (op->flags & COLL_SEGMENTED) mb_param_opt(run, row, "segment");
    if (op->smul == MUL_M) mb_param_opt(run, row, "messages");
    if (!(op->flags & COLL_NOSIZE)) {
        row->bytes = (long long)b;
        row->sent_bytes = (double)b * (op->smul == MUL_M ? (double)s->messages : 1.0);
    }
}

/* The prepared test measured under --timing, and its aggregate bandwidth. */
static void measure(struct mb_run *run, struct coll_kern *k, struct mb_row *row, size_t b, struct mb_sweep *sw)
{
    struct mb_kernel kk = coll_kernel(k, run->world, sw);
    double ref = 0; /* (collective + barrier) - barrier, paired per repetition: the interval is that of the
                     * difference (docs/measurement.md) */
    int paired = 0;
    if (timing == 0)
        kk.run_timed = coll_osu_timed;
    else
        paired = coll_subtract(&kk, &ref);
    mb_measure(run, &kk, row);
    if (paired) {
        if (!nref || ref < ref_min) ref_min = ref;
        if (!nref || ref > ref_max) ref_max = ref;
        nref++;
    }
    double units = coll_agg_units(run, k->s, k->op);
    if (units > 0 && row->t.median > 0) row->agg_mbps = units * (double)b / row->t.median / 1e6;
}

static void run_test(struct mb_run *run, struct coll_state *s, const struct test *t, size_t b,
                     const struct coll_comm *c, const struct root *rt, struct mb_sweep *sw)
{
    const struct coll_op *op = t->op;
    struct mb_row row;
    describe(run, &row, s, t, b, c, rt);
    mb_begin(run, &row);
    s->root_mode = rt ? rt->rotate : 0;
    s->fixed_root = rt ? rt->rank : 0;
    struct coll_kern k = {s, op, t->nb, NULL, 0};
    const char *why = coll_prepare(run, &k, b, rt && !rt->rotate ? rt->rank : -1, NULL);
    if (why)
        mb_na(run, &row, "%s", why);
    else
        measure(run, &k, &row, b, sw);
    mb_end(run, &row);
    /* --overlap: the nonblocking form again, with computation of --overlap x its own time between its
     * start and its wait; each call timed alone (osu), whatever --timing says (docs/collectives.md) */
    if (!why && t->nb && run->opts.overlap > 0) {
        struct mb_row ov;
        mb_overlap_row(&row, &ov);
        mb_param(&ov, "timing", "osu");
        mb_begin(run, &ov);
        struct mb_kernel kk = {.state = &k, .comm = run->world, .run_timed = coll_osu_timed,
                               .compute_s = mb_overlap_compute_s(run, &row)};
        if (op->fill && op->check) {
            kk.fill = coll_kern_fill;
            kk.check = coll_kern_check;
        }
        mb_measure(run, &kk, &ov);
        mb_end(run, &ov);
    }
    coll_teardown(s, op);
}

/* ------------------------------------------------------------ the plan */

/* The rows test t makes at a size it has: one per communicator and root, and under --overlap its
 * nonblocking form's second row. */
static int rows_per_size(const struct mb_run *run, const struct test *t, const struct coll_plan *pl)
{
    return pl->ncomms * (t->op->flags & COLL_ROOTED ? nroots : 1) * (t->nb && run->opts.overlap > 0 ? 2 : 1);
}

/* The rows the selected tests make over the plan's sizes: the progress line's total. */
static int plan_rows(const struct mb_run *run, const struct coll_plan *pl)
{
    int n = 0;
    for (int i = 0; i < ntests; i++)
        for (int j = 0; j < pl->nsizes && (sel_tests & tests[i].sel); j++)
            n += coll_applies(tests[i].op, pl->sizes[j], pl->sizes[0]) * rows_per_size(run, &tests[i], pl);
    return n;
}

/* Every selected test over the plan.  --order shuffle: tests, communicators and roots; sizes keep their order
 * (the sweep). */
static void measure_tests(struct mb_run *run, const struct coll_plan *pl)
{
    struct coll_state s = {.segment = segment, .messages = messages};
    for (int jt = 0; jt < ntests; jt++) {
        const int i = mb_order(run, 0, ntests, jt, 0);
        if (!(sel_tests & tests[i].sel)) continue;
        int rooted = (tests[i].op->flags & COLL_ROOTED) != 0, nr = rooted ? nroots : 1;
        struct mb_sweep sw[4][MAX_ROOTS] = {{{0}}}; /* one size sweep per communicator and root */
        for (int jb = 0; jb < pl->nsizes; jb++) {
            mb_order(run, 1, pl->nsizes, jb, 1);
            size_t b = pl->sizes[jb];
            if (!coll_applies(tests[i].op, b, pl->sizes[0])) continue;
            for (int jc = 0; jc < pl->ncomms; jc++) {
                const int c = mb_order(run, 2, pl->ncomms, jc, 0);
                const struct coll_comm *cc = &pl->comms[c];
                s.comm = cc->comm;
                MPI_Comm_rank(s.comm, &s.rank);
                MPI_Comm_size(s.comm, &s.size);
                s.nodes = &cc->nodes;
                s.local_of = cc->local_of;
                for (int jr = 0; jr < nr; jr++) {
                    const int r = mb_order(run, 3, nr, jr, 0);
                    run_test(run, &s, &tests[i], b, cc, rooted ? &roots[r] : NULL, &sw[c][r]);
                }
            }
        }
    }
}

/* ------------------------------------------------------------ main */

static void meta(struct mb_run *run, const struct coll_comm *comms, int ncomms)
{
    char m[2048], rootj[256] = "", commj[128] = "";
    size_t n = 0; /* at most MAX_ROOTS short words: they fit */
    for (int i = 0; i < nroots; i++) {
        const struct root *r = &roots[i];
        int quoted = r->rotate || !strcmp(r->word, "same");
        n += (size_t)snprintf(rootj + n, sizeof rootj - n, "%s%s%s%s%s", i ? ", " : nroots > 1 ? "[" : "",
                              quoted ? "\"" : "", r->rotate ? "rotate" : quoted ? "same" : r->param,
                              quoted ? "\"" : "", nroots > 1 && i == nroots - 1 ? "]" : "");
    }
    n = 0;
    for (int i = 0; i < ncomms; i++)
        n += (size_t)snprintf(commj + n, sizeof commj - n, "%s\"%s\"", i ? ", " : "", comms[i].name);
    snprintf(m, sizeof m,
             "{\"root\": %s, \"comms\": [%s], \"timing\": \"%s\", \"segment\": %zu, \"series_messages\": %ld, "
             "\"reduction_datatype\": \"MPI_DOUBLE\", \"reduction_op\": \"MPI_SUM\"}",
             rootj, commj, timing ? "subtract" : "osu", segment, messages);
    if (timing && nref) {
        size_t l = strlen(m) - 1; /* before the closing brace */
        snprintf(m + l, sizeof m - l, ", \"barrier_reference_s\": {\"tests\": %d, \"min\": %.9g, \"max\": %.9g}}",
                 nref, ref_min, ref_max);
    }
    mb_meta_add(run, "collectives", m);
}

int main(int argc, char **argv)
{
    add_tests(coll_library);
    add_tests(coll_algorithms);
    add_tests(coll_twolevel);
    add_tests(coll_persistent);
    struct mb_run *run = mb_init(&argc, &argv, &program);
    for (int i = 0; i < nroots; i++)
        if (!roots[i].rotate && roots[i].rank >= run->nprocs)
            mb_usage_error(run, "--root %d is outside the communicator (ranks 0 to %d)", roots[i].rank,
                           run->nprocs - 1);
    if (!sel_tests) { /* the default: everything but the persistent forms, which are measured when named */
        sel_tests = ~0ul;
        char w[64];
        for (int i = 0; *mb_word(PERSIST_TESTS, i, w, sizeof w); i++) sel_tests &= ~word_bit(w);
    }
    if (!sel_comms) sel_comms = 1ul << COMM_WORLD;
    if (alg_arg) coll_lib_algorithms_check(run, alg_arg, sel_tests, word_bit);

    struct coll_comm comms[NCOMMS];
    struct coll_plan pl = {.comms = comms, .ncomms = coll_comms_open(run, sel_comms, comms)};
    pl.nsizes = mb_sizes(&run->opts, pl.sizes);
    int ncomms = pl.ncomms;
    if (alg_arg) {
        coll_lib_algorithms(run, &pl, roots[0].param, roots[0].rotate ? 0 : roots[0].rank);
        coll_comms_close(comms, ncomms);
        return mb_finish(run);
    }
    run->ntotal = plan_rows(run, &pl);
    measure_tests(run, &pl);

    meta(run, comms, ncomms);
    if (run->rank == 0) {
        const char *params[MAX_ROOTS], *words[MAX_ROOTS];
        for (int i = 0; i < nroots; i++) {
            params[i] = roots[i].param;
            words[i] = roots[i].word;
        }
        struct coll_report info = {root_arg, timing ? "subtract" : "osu", messages, segment, comms, ncomms,
                                   params, words, nroots};
        coll_report(run, &info);
    }
    coll_comms_close(comms, ncomms);
    return mb_finish(run);
}
