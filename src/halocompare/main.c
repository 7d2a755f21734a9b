/* halocompare — W. Gropp's 2-D halo-exchange comparison: every method on
 * every communicator (rank ordering), 4 and 8 neighbours, periodic or not,
 * plus the one-sender test. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

#define NAIVE "send-recv-naive"

/* All method families, in table order. */
static const struct halo_method *const families[] = {halo_p2p_methods, halo_rma_methods, halo_neighbor_methods,
                                                     halo_unsafe_methods};
static const struct halo_method *methods[64];
static int nmethods;
static char method_choices[1024];

static long count = 2000, seed = 1;
static unsigned long sel_methods, sel_comms, sel_nbrs, sel_tests;
static int periodic_choice = -1; /* no, yes, both */
static int win_flavor = HALO_WIN_ALLOCATE, unsafe;
static unsigned long rma_assert;
static const char *const win_names[] = {"create", "allocate"};

static const struct mb_option options[] = {
    {"count", 'c', MB_OPT_INT, &count, 1, 1 << 24, NULL, "doubles per neighbour message (2000)"},
    {"methods", 0, MB_OPT_LIST, &sel_methods, 0, 0, method_choices,
     "methods to run (default: all; all includes " NAIVE " only with --unsafe)"},
    {"comms", 0, MB_OPT_LIST, &sel_comms, 0, 0, "world,dup,evenodd,cart,node,random",
     "communicators (rank orderings) to compare (default: all)"},
    {"neighbors", 0, MB_OPT_LIST, &sel_nbrs, 0, 0, "4,8", "stencils: 4 (N/S/E/W), 8 (plus diagonals) (default: 4,8)"},
    {"periodic", 0, MB_OPT_CHOICE, &periodic_choice, 0, 0, "no,yes,both", "mesh boundaries (default: both)"},
    {"tests", 0, MB_OPT_LIST, &sel_tests, 0, 0, "halo,one-sender", "tests to run (default: all)"},
    {"seed", 0, MB_OPT_INT, &seed, 0, 2147483647, NULL, "seed of the random rank ordering (1)"},
    {"win", 0, MB_OPT_CHOICE, &win_flavor, 0, 0, "create,allocate",
     "RMA window flavour: MPI_Win_create or MPI_Win_allocate (allocate)"},
    {"assert", 0, MB_OPT_LIST, &rma_assert, 0, 0, "noprecede,nosucceed,nocheck",
     "RMA assertions: MPI_MODE_NOPRECEDE/NOSUCCEED on fences, NOCHECK on locks (none)"},
    {"unsafe", 0, MB_OPT_FLAG, &unsafe, 0, 0, NULL, "allow the deliberately unsafe method " NAIVE " (may deadlock)"},
    {0},
};

static void list(void)
{
    printf("tests: halo, one-sender\nmethods:");
    for (int i = 0; i < nmethods; i++)
        printf(" %s%s", methods[i]->name, strcmp(methods[i]->name, NAIVE) ? "" : " (needs --unsafe)");
    printf("\ncomms:");
    for (int c = 0; c < NCOMM; c++) printf(" %s", halo_comm_names[c]);
    printf("\nneighbors: 4 8\nperiodic: no yes\n");
}

static void collect_methods(void)
{
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const struct halo_method *m = families[f]; m->name; m++) {
            methods[nmethods++] = m;
            n += (size_t)snprintf(method_choices + n, sizeof method_choices - n, "%s%s", n ? "," : "", m->name);
        }
}

static int naive_index(void)
{
    for (int i = 0; i < nmethods; i++)
        if (!strcmp(methods[i]->name, NAIVE)) return i;
    return -1;
}

/* "all" (every bit set) never selects the unsafe method; naming it needs --unsafe. */
static const char *validate(void)
{
    if (!unsafe && sel_methods != ~0ul && (sel_methods >> naive_index() & 1))
        return "--methods " NAIVE " needs --unsafe (it deadlocks above the eager limit)";
    return NULL;
}

static const struct mb_program program = {
    .name = "halocompare",
    .summary = "2-D halo exchange: methods x communicators x 4/8 neighbours x periodic, in MB/s per process",
    .options = options,
    .flags = MB_SYNC_AUTO,
    .thread_level = MPI_THREAD_SINGLE,
    .list = list,
    .validate = validate,
};

/* What the kernels see: the halo, the method, and (one-sender) who sends. */
struct call {
    struct halo *h;
    const struct halo_method *m;
    int sender;
};

/* ---------------------------------------------------------- verification */

static void fill(void *state, long it)
{
    struct halo *h = ((struct call *)state)->h;
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        mb_pattern_fill_doubles(h->sbuf[d], (size_t)h->count, (uint32_t)h->rank, (uint32_t)d, (uint32_t)it);
        for (int k = 0; k < h->count; k++) h->rbuf[d][k] = -1.0; /* never a pattern value */
    }
}

/* rbuf[d] must hold what partner[d] sent towards us (direction opp[d]). */
static int check_dir(struct halo *h, int d, long it, char *msg, size_t len)
{
    int o = halo_opp[d];
    long bad = mb_pattern_check_doubles(h->rbuf[d], (size_t)h->count, (uint32_t)h->partner[d], (uint32_t)o,
                                        (uint32_t)it);
    if (bad < 0) return 0;
    snprintf(msg, len, "from neighbour %d (%s): first bad index %ld: got %.17g, expected %.17g", h->partner[d],
             halo_dir_name[d], bad, h->rbuf[d][bad],
             mb_pattern_double((uint32_t)h->partner[d], (uint32_t)o, (uint32_t)it, (size_t)bad));
    return 1;
}

/* Checks every direction (halo) or only those whose partner is the sender. */
static int check(void *state, long it, char *msg, size_t len)
{
    struct call *c = state;
    for (int i = 0; i < c->h->ndirs; i++) {
        int d = c->h->dirs[i];
        if ((c->sender < 0 || c->h->partner[d] == c->sender) && check_dir(c->h, d, it, msg, len)) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ kernels */

static void method_run(void *state, long iters)
{
    struct call *c = state;
    c->m->run(c->h, iters);
}

/* One interior process sends to all its neighbours, nobody else sends. */
static void one_sender_run(void *state, long iters)
{
    struct call *c = state;
    struct halo *h = c->h;
    for (long it = 0; it < iters; it++) {
        int n = 0;
        for (int i = 0; i < h->ndirs; i++) {
            int d = h->dirs[i];
            if (h->partner[d] == c->sender)
                MPI_Irecv(h->rbuf[d], h->count, MPI_DOUBLE, c->sender, halo_opp[d], h->comm, &h->req[n++]);
        }
        if (h->rank == c->sender)
            for (int i = 0; i < h->ndirs; i++) {
                int d = h->dirs[i];
                MPI_Isend(h->sbuf[d], h->count, MPI_DOUBLE, h->partner[d], d, h->comm, &h->req[n++]);
            }
        MPI_Waitall(n, h->req, MPI_STATUSES_IGNORE);
    }
}

/* ------------------------------------------------------------------ driver */

static void describe(struct mb_row *row, const struct halo *h, int periodic, int nnbr)
{
    snprintf(row->comm, sizeof row->comm, "%s", h->comm_name);
    row->neighbors = nnbr;
    row->periodic = periodic;
    row->threads = 1;
    row->bytes = (long long)h->count * 8;
}

/* Bytes one process sends per exchange: the most neighbours any process has. */
static double sent_bytes(const struct halo *h)
{
    int most;
    MPI_Allreduce(&h->ndirs, &most, 1, MPI_INT, MPI_MAX, h->comm);
    return (double)most * h->count * 8;
}

static double *sbuf_own[MAXDIR], *rbuf_own[MAXDIR];

static void run_halo(struct mb_run *run, struct halo *h)
{
    double sent = sent_bytes(h);
    for (int j = 0; j < nmethods; j++) {
        const int i = mb_order(run, 3, nmethods, j, 0);
        if (!(sel_methods >> i & 1)) continue;
        struct mb_row row;
        mb_row_init(&row, "halo", methods[i]->name);
        describe(&row, h, h->periodic, h->nnbr);
        if (!strncmp(methods[i]->name, "rma-", 4)) {
            mb_param_opt(run, &row, "win");
            mb_param_opt(run, &row, "assert");
        }
        if (!strcmp(h->comm_name, "random")) mb_param_opt(run, &row, "seed");
        row.sent_bytes = sent;
        mb_begin(run, &row);
        memcpy(h->sbuf, sbuf_own, sizeof sbuf_own); /* undo the previous method's repointing */
        memcpy(h->rbuf, rbuf_own, sizeof rbuf_own);
        const char *why = methods[i]->setup ? methods[i]->setup(h) : NULL;
        if (why) {
            mb_na(run, &row, "%s", why);
        } else {
            struct call c = {h, methods[i], -1};
            struct mb_kernel k = {.state = &c, .comm = h->comm, .run = method_run, .fill = fill, .check = check};
            mb_measure(run, &k, &row);
            if (methods[i]->teardown) methods[i]->teardown(h);
        }
        mb_end(run, &row);
    }
}

static void run_one_sender(struct mb_run *run, struct halo *h)
{
    struct call c = {h, NULL, (h->dims[0] / 2) * h->dims[1] + h->dims[1] / 2}; /* the centre process */
    int n = h->rank == c.sender ? h->ndirs : 0, sends;
    MPI_Allreduce(&n, &sends, 1, MPI_INT, MPI_MAX, h->comm);
    struct mb_row row;
    mb_row_init(&row, "one-sender", "isend");
    describe(&row, h, h->periodic, h->nnbr);
    row.sent_bytes = (double)sends * h->count * 8;
    mb_begin(run, &row);
    struct mb_kernel k = {.state = &c, .comm = h->comm, .run = one_sender_run, .fill = fill, .check = check};
    mb_measure(run, &k, &row);
    mb_end(run, &row);
}

static int popcount(unsigned long m) { return __builtin_popcountl(m); }

int main(int argc, char **argv)
{
    collect_methods();
    struct mb_run *run = mb_init(&argc, &argv, &program);
    if (!sel_methods) sel_methods = (1ul << nmethods) - 1;
    if (!sel_comms) sel_comms = (1ul << NCOMM) - 1;
    if (!sel_nbrs) sel_nbrs = 3;
    if (!sel_tests) sel_tests = 3;
    sel_methods &= (1ul << nmethods) - 1;
    if (!unsafe) sel_methods &= ~(1ul << naive_index());
    int first_p = periodic_choice == 1 ? 1 : 0, last_p = periodic_choice == 0 ? 0 : 1;
    int nblocks = last_p - first_p + 1, nnbrs = popcount(sel_nbrs & 3);

    run->ntotal = (sel_tests & 1) ? nblocks * popcount(sel_comms) * nnbrs * popcount(sel_methods) : 0;
    run->ntotal += (sel_tests & 2) ? nblocks * nnbrs : 0;

    struct halo h = {.count = (int)count, .win_flavor = win_flavor, .rma_assert = (unsigned)rma_assert & 7u};
    for (int d = 0; d < MAXDIR; d++) {
        h.sbuf[d] = sbuf_own[d] = mb_alloc((size_t)count * sizeof(double));
        h.rbuf[d] = rbuf_own[d] = mb_alloc((size_t)count * sizeof(double));
    }

    char notes[2][NCOMM][160] = {{{0}}};
    /* --order shuffle: the communicators (the one-sender tests one more item) and the methods of each block */
    for (int p = first_p; p <= last_p; p++) {
        mb_order(run, 0, last_p - first_p + 1, p - first_p, 1);
        for (int jc = 0; jc <= NCOMM; jc++) {
            const int ck = mb_order(run, 1, NCOMM + 1, jc, 0);
            if (ck == NCOMM) {
                for (int nb = 0; nb < 2 && (sel_tests & 2); nb++) {
                    mb_order(run, 2, 2, nb, 1);
                    if (!(sel_nbrs >> nb & 1)) continue;
                    h.comm_name = "world";
                    halo_neighbors(&h, MPI_COMM_WORLD, p, nb ? 8 : 4);
                    memcpy(h.sbuf, sbuf_own, sizeof sbuf_own);
                    memcpy(h.rbuf, rbuf_own, sizeof rbuf_own);
                    run_one_sender(run, &h);
                }
                continue;
            }
            if (!(sel_tests & 1) || !(sel_comms >> ck & 1)) continue;
            MPI_Comm comm = halo_comm_create((enum comm_kind)ck, run, p, (unsigned long)seed, notes[p][ck],
                                             sizeof notes[p][ck]);
            h.comm_name = halo_comm_names[ck];
            for (int nb = 0; nb < 2; nb++) {
                mb_order(run, 2, 2, nb, 1);
                if (!(sel_nbrs >> nb & 1)) continue;
                halo_neighbors(&h, comm, p, nb ? 8 : 4);
                run_halo(run, &h);
            }
            if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
        }
    }

    /* what the reader of the table needs to know about the orderings */
    char meta[1024], rma_note[128];
    unsigned a = h.rma_assert;
    snprintf(rma_note, sizeof rma_note, "%s%s%s", a & HALO_ASSERT_NOPRECEDE ? ",noprecede" : "",
             a & HALO_ASSERT_NOSUCCEED ? ",nosucceed" : "", a & HALO_ASSERT_NOCHECK ? ",nocheck" : "");
    snprintf(meta, sizeof meta,
             "{\"dims\": [%d, %d], \"count\": %ld, \"seed\": %ld, \"cart_reordered\": {\"non_periodic\": \"%s\", "
             "\"periodic\": \"%s\"}, \"node_ordering\": \"%s\", \"win\": \"%s\", \"assert\": \"%s\"}",
             h.dims[0], h.dims[1], count, seed, notes[0][COMM_CART], notes[1][COMM_CART],
             notes[first_p][COMM_NODE], win_names[win_flavor], a ? rma_note + 1 : "none");
    char rma_line[160];
    snprintf(rma_line, sizeof rma_line, "RMA: window MPI_Win_%s, assertions %s", win_names[win_flavor],
             a ? rma_note + 1 : "none");
    mb_meta_add(run, "halocompare", meta);
    const char *cart_note[2] = {notes[0][COMM_CART], notes[1][COMM_CART]};
    if (run->rank == 0) halo_report(run, cart_note, rma_line);
    for (int d = 0; d < MAXDIR; d++) {
        free(sbuf_own[d]);
        free(rbuf_own[d]);
    }
    return mb_finish(run);
}
