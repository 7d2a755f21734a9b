/* collectives — the library's collectives (blocking and nonblocking),
 * user-level broadcast algorithms beside MPI_Bcast, and the series test
 * (m broadcasts in a loop vs a pipelined chain), over message sizes, with
 * two timing methods and two root placements. */
#include "coll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* --tests words: selector index = position in this list. */
#define LIB_TESTS                                                                                                  \
    "barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall,reduce_scatter_block,scan"
#define NB_TESTS                                                                                                   \
    "ibarrier,ibcast,ireduce,iallreduce,igather,iscatter,iallgather,ialltoall,ireduce_scatter_block,iscan"
#define ALG_TESTS "bcast-binomial,bcast-chain,bcast-scatter-allgather,series"
enum { NLIB = 10, SEL_ALG = 2 * NLIB, NSEL = SEL_ALG + 4 };

static unsigned long sel_tests;
static const char *root_arg = "same";
static int timing = 0; /* 0 osu, 1 subtract */
static size_t segment = 8192;
static long messages = 8;
static int root_mode;    /* 0 fixed, 1 rotate */
static long fixed_root;  /* with root_mode 0 */

static const struct mb_option options[] = {
    {"tests", 't', MB_OPT_LIST, &sel_tests, 0, 0, LIB_TESTS "," NB_TESTS "," ALG_TESTS,
     "collectives and algorithms to run (default: all)"},
    {"root", 0, MB_OPT_STRING, &root_arg, 0, 0, NULL,
     "root of rooted operations: same (rank 0), rotate (call number mod ranks) or a rank number (same)"},
    {"timing", 0, MB_OPT_CHOICE, &timing, 0, 0, "osu,subtract",
     "osu: per-call time, barrier between calls; subtract: (collective+barrier loop) - barrier loop (osu)"},
    {"segment", 0, MB_OPT_SIZE, &segment, 1, 1ll << 30, NULL, "segment size of the pipelined chain broadcast (8K)"},
    {"messages", 0, MB_OPT_INT, &messages, 1, 65536, NULL, "series test: number m of successive messages (8)"},
    {0},
};

static const char *validate(void)
{
    static char msg[160];
    long long r;
    if (!strcmp(root_arg, "same")) {
        root_mode = 0;
        fixed_root = 0;
    } else if (!strcmp(root_arg, "rotate")) {
        root_mode = 1;
    } else if (!mb_parse_long(root_arg, 0, INT_MAX, &r)) {
        root_mode = 0;
        fixed_root = (long)r;
    } else {
        snprintf(msg, sizeof msg, "--root must be same, rotate or a rank number, got '%s'", root_arg);
        return msg;
    }
    return NULL;
}

static void list(void)
{
    printf("tests (--tests):\n  blocking:    %s\n  nonblocking: %s\n  algorithms:  %s\n", LIB_TESTS, NB_TESTS,
           ALG_TESTS);
    printf("methods (CSV): library; bcast: binomial, chain, scatter-allgather; series: bcast-loop, chain\n");
    printf("root: same, rotate, N\ntiming: osu, subtract\n");
}

static const struct mb_program program = {
    .name = "collectives",
    .summary = "MPI collectives (blocking and nonblocking), user-level broadcast algorithms and the series test, "
               "time per call over message sizes",
    .options = options,
    .flags = MB_USES_SIZES | MB_SYNC_AUTO,
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
    int nb;  /* the nonblocking form */
    int sel; /* --tests bit */
    char name[32];
};
static struct test tests[2 * NLIB + 8];
static int ntests;

static void collect_tests(void)
{
    for (int i = 0; coll_library[i].test; i++)
        for (int nb = 0; nb < 2; nb++) {
            struct test *t = &tests[ntests++];
            *t = (struct test){&coll_library[i], nb, nb * NLIB + i, ""};
            snprintf(t->name, sizeof t->name, "%s%s", nb ? "i" : "", coll_library[i].test);
        }
    for (int i = 0; coll_algorithms[i].test; i++) {
        const struct coll_op *op = &coll_algorithms[i];
        struct test *t = &tests[ntests++];
        *t = (struct test){op, 0, strcmp(op->test, "series") ? SEL_ALG + i : SEL_ALG + 3, ""};
        snprintf(t->name, sizeof t->name, "%s", op->test);
    }
}

/* Whether test t has a row at message size b (the first size for barriers). */
static int applies(const struct test *t, size_t b, size_t first)
{
    if (t->op->flags & COLL_NOSIZE) return b == first;
    if (t->op->flags & COLL_DOUBLES) return b % 8 == 0;
    return 1;
}

/* ------------------------------------------------------------ kernels */

struct kern {
    struct coll_state *s;
    const struct test *t;
};

static int one_call(struct kern *k)
{
    struct coll_state *s = k->s;
    s->root = coll_next_root(s);
    s->calls++;
    if (!k->t->nb) return k->t->op->call(s, NULL);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = k->t->op->call(s, &r);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static int is_sync(const struct kern *k) { return (k->t->op->flags & COLL_SYNC) != 0; }

/* OSU style: each call timed alone, a barrier (untimed) between calls. */
static double osu_timed(void *state, long iters)
{
    struct kern *k = state;
    double t = 0;
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        one_call(k);
        t += MPI_Wtime() - t0;
        if (!is_sync(k)) MPI_Barrier(k->s->comm);
    }
    return t;
}

/* Barrier subtraction: the timed loop is collective + barrier; a
 * barrier-only loop is measured beside it and its median subtracted. */
static void with_barrier_run(void *state, long iters)
{
    struct kern *k = state;
    for (long i = 0; i < iters; i++) {
        one_call(k);
        if (!is_sync(k)) MPI_Barrier(k->s->comm);
    }
}

static void barrier_run(void *state, long iters)
{
    struct kern *k = state;
    for (long i = 0; i < iters; i++) MPI_Barrier(k->s->comm);
}

static void fill(void *state, long it)
{
    struct kern *k = state;
    k->t->op->fill(k->s, it);
}

static int check(void *state, long it, char *msg, size_t len)
{
    struct kern *k = state;
    return k->t->op->check(k->s, it, msg, len);
}

/* --timing subtract: the barrier-only medians that were subtracted. */
static double ref_min, ref_max;
static int nref;

static void subtract(struct mb_stats *t, double b)
{
    double *v[] = {&t->min, &t->median, &t->mean, &t->max, &t->ci_lo, &t->ci_hi};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) *v[i] = *v[i] > b ? *v[i] - b : 0;
}

/* ------------------------------------------------------------ one test */

static size_t mul(enum coll_mul m, const struct coll_state *s)
{
    switch (m) {
    case MUL_0: return 0;
    case MUL_1: return s->bytes;
    case MUL_P: return (size_t)s->size * s->bytes;
    case MUL_M: return (size_t)s->messages * s->bytes;
    }
    return 0;
}

/* Buffers and helper arrays; returns NULL or why the test is n/a. */
static const char *setup(struct coll_state *s, const struct test *t, size_t b)
{
    s->bytes = b;
    s->count = b / 8;
    s->calls = 0;
    if (b > INT_MAX) return "message size exceeds INT_MAX";
    s->sbytes = mul(t->op->smul, s);
    s->rbytes = mul(t->op->rmul, s);
    s->sbuf = mb_alloc(s->sbytes);
    s->rbuf = mb_alloc(s->rbytes);
    size_t nseg = b ? (b + s->segment - 1) / s->segment : 1;
    if ((size_t)s->messages > nseg) nseg = (size_t)s->messages;
    s->reqs = calloc(nseg, sizeof *s->reqs);
    s->counts = calloc((size_t)s->size, sizeof *s->counts);
    s->displs = calloc((size_t)s->size, sizeof *s->displs);
    size_t chunk = (b + (size_t)s->size - 1) / (size_t)s->size;
    for (int i = 0; i < s->size; i++) {
        size_t lo = (size_t)i * chunk < b ? (size_t)i * chunk : b, hi = lo + chunk < b ? lo + chunk : b;
        s->displs[i] = (int)lo;
        s->counts[i] = (int)(hi - lo);
    }
    return NULL;
}

static void teardown(struct coll_state *s)
{
    free(s->sbuf);
    free(s->rbuf);
    free(s->reqs);
    free(s->counts);
    free(s->displs);
    s->sbuf = s->rbuf = NULL;
    s->reqs = NULL;
    s->counts = s->displs = NULL;
}

static void run_test(struct mb_run *run, struct coll_state *s, const struct test *t, size_t b, struct mb_sweep *sw)
{
    const struct coll_op *op = t->op;
    struct mb_row row;
    mb_row_init(&row, t->name, op->method);
    snprintf(row.comm, sizeof row.comm, "world");
    mb_param_opt(run, &row, "timing");
    if (op->flags & COLL_ROOTED) { /* --root same and --root 0 measure the same thing */
        if (root_mode)
            mb_param(&row, "root", "rotate");
        else
            mb_param(&row, "root", "%ld", fixed_root);
    }
    if (strstr(op->method, "chain")) mb_param_opt(run, &row, "segment");
    if (!strcmp(op->test, "series")) mb_param_opt(run, &row, "messages");
    if (!(op->flags & COLL_NOSIZE)) {
        row.bytes = (long long)b;
        row.sent_bytes = (double)b * (strcmp(op->test, "series") ? 1.0 : (double)s->messages);
    }
    mb_begin(run, &row);
    const char *why = setup(s, t, b);
    struct kern k = {s, t};
    if (!why) {
        /* one untimed call tells whether the library supports the operation */
        int rc = one_call(&k), bad = rc != MPI_SUCCESS, any;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, run->world);
        if (any) why = "the MPI library returned an error";
        if (bad) {
            static char err[MPI_MAX_ERROR_STRING + 64];
            int len = 0;
            MPI_Error_string(rc, err, &len);
            why = err;
        }
    }
    if (why) {
        mb_na(run, &row, "%s", why);
    } else {
        struct mb_kernel kk = {.state = &k, .comm = run->world, .sweep = sw};
        if (op->fill && op->check) {
            kk.fill = fill;
            kk.check = check;
        }
        if (timing == 0) {
            kk.run_timed = osu_timed;
            mb_measure(run, &kk, &row);
        } else {
            kk.run = with_barrier_run;
            mb_measure(run, &kk, &row);
            if (!is_sync(&k)) {
                struct mb_row ref;
                mb_row_init(&ref, "barrier", "reference");
                struct mb_kernel bk = {.state = &k, .comm = run->world, .run = barrier_run};
                mb_measure(run, &bk, &ref);
                subtract(&row.t, ref.t.median);
                if (!nref || ref.t.median < ref_min) ref_min = ref.t.median;
                if (!nref || ref.t.median > ref_max) ref_max = ref.t.median;
                nref++;
            }
        }
    }
    teardown(s);
    mb_end(run, &row);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    collect_tests();
    struct mb_run *run = mb_init(&argc, &argv, &program);
    if (!root_mode && fixed_root >= run->nprocs)
        mb_usage_error(run, "--root %ld is outside the communicator (ranks 0 to %d)", fixed_root, run->nprocs - 1);
    if (!sel_tests) sel_tests = ~0ul;

    struct coll_state s = {.root_mode = root_mode, .fixed_root = (int)fixed_root, .segment = segment,
                           .messages = messages};
    MPI_Comm_dup(MPI_COMM_WORLD, &s.comm);
    MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s.comm, &s.rank);
    MPI_Comm_size(s.comm, &s.size);

    size_t lo = run->opts.size_min, hi = run->opts.size_max;
    run->ntotal = 0;
    for (int i = 0; i < ntests; i++)
        if (sel_tests >> tests[i].sel & 1)
            for (size_t b = lo; b <= hi; b = mb_next_size(b)) run->ntotal += applies(&tests[i], b, lo);
    for (int j = 0; j < ntests; j++) {
        const int i = mb_order(run, 0, ntests, j, 0);
        struct mb_sweep sw = {0};
        if (sel_tests >> tests[i].sel & 1)
            for (size_t b = lo; b <= hi; b = mb_next_size(b))
                if (applies(&tests[i], b, lo)) run_test(run, &s, &tests[i], b, &sw);
    }

    char meta[1024], rootj[48];
    if (root_mode)
        snprintf(rootj, sizeof rootj, "\"rotate\"");
    else if (!strcmp(root_arg, "same"))
        snprintf(rootj, sizeof rootj, "\"same\"");
    else
        snprintf(rootj, sizeof rootj, "%ld", fixed_root);
    snprintf(meta, sizeof meta,
             "{\"root\": %s, \"timing\": \"%s\", \"segment\": %zu, \"series_messages\": %ld, "
             "\"reduction_datatype\": \"MPI_DOUBLE\", \"reduction_op\": \"MPI_SUM\"}",
             rootj, timing ? "subtract" : "osu", segment, messages);
    if (timing && nref) {
        size_t l = strlen(meta) - 1; /* before the closing brace */
        snprintf(meta + l, sizeof meta - l, ", \"barrier_reference_s\": {\"tests\": %d, \"min\": %.9g, \"max\": %.9g}}",
                 nref, ref_min, ref_max);
    }
    mb_meta_add(run, "collectives", meta);
    if (run->rank == 0) {
        char rootname[32];
        snprintf(rootname, sizeof rootname, "%s", root_mode ? "rotate" : root_arg);
        struct coll_report info = {rootname, timing ? "subtract" : "osu", messages, segment};
        coll_report(run, &info);
    }
    MPI_Comm_free(&s.comm);
    return mb_finish(run);
}
