/* halocompare — W. Gropp's halo-exchange comparison, in 1, 2 or 3
 * dimensions: every method on every communicator (rank ordering), the faces
 * or the full stencil (2; 4 and 8; 6 and 26 neighbours), periodic or not, at
 * one message size or a sweep (-m), plus the one-sender test. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

#define NAIVE "send-recv-naive"
#define PARTITIONED "partitioned"

/* All method families, in table order. */
static const struct halo_method *const families[] = {halo_p2p_methods, halo_partitioned_methods, halo_rma_methods,
                                                     halo_neighbor_methods, halo_unsafe_methods};
static const struct halo_method *methods[64];
static int nmethods;
static char method_choices[1024];

enum { DEFAULT_COUNT = 2000, MAXCOUNT = 1 << 24, DEFAULT_PARTITIONS = 4 };
static long count, seed = 1, ndims = 2; /* count 0: not given (DEFAULT_COUNT, or -m) */
static unsigned long sel_methods, sel_comms, sel_nbrs, sel_tests;
static char stencil_choices[32]; /* --neighbors: bit i of sel_nbrs = halo_stencils[i] */
static int periodic_choice = -1; /* no, yes, both */
static int win_flavor = HALO_WIN_ALLOCATE, unsafe;
enum { GROUP_ALL, GROUP_COMM, GROUP_NONE };
static int group_choice = GROUP_ALL; /* --group */
static const char *const group_names[] = {"all", "comm", "none"};
static unsigned long rma_assert;
enum { LAYOUT_BUFFERS, LAYOUT_ARRAY };
static int layout; /* --layout */
static unsigned long sel_packing; /* --packing: bit PACK_* (0: all) */
static const char *extents_arg;   /* --extents AxB[xC] */
static long extents[MAXDIM];      /* parsed; extents[0] = 0: from --count */
static const char *const win_names[] = {"create", "allocate"};
static long partitions; /* --partitions; 0: not given (DEFAULT_PARTITIONS) */
static int phases, mock; /* --phases, --mock (docs/halo-phases.md) */
static int phases_cost;  /* --phases-cost: every test twice, without and with phase timing, interleaved */

static const struct mb_option options[] = {
    {"count", 'c', MB_OPT_INT, &count, 1, MAXCOUNT, NULL,
     "doubles per neighbour message (2000); -m MIN:MAX sweeps bytes per message instead"},
    {"dims", 0, MB_OPT_INT, &ndims, 1, MAXDIM, NULL, "grid dimensions: 1, 2 or 3 (2)"},
    {"methods", 0, MB_OPT_LIST, &sel_methods, 0, 0, method_choices,
     "methods to run (default: all; all includes " NAIVE " only with --unsafe)"},
    {"comms", 0, MB_OPT_LIST, &sel_comms, 0, 0, "world,dup,evenodd,cart,node,random",
     "communicators (rank orderings) to compare (default: all)"},
    {"neighbors", 0, MB_OPT_LIST, &sel_nbrs, 0, 0, stencil_choices,
     "stencils: faces (1-D 2, 2-D 4, 3-D 6) or all (2-D 8, 3-D 26 with edges and corners) (default: those of --dims)"},
    {"periodic", 0, MB_OPT_CHOICE, &periodic_choice, 0, 0, "no,yes,both", "mesh boundaries (default: both)"},
    {"tests", 0, MB_OPT_LIST, &sel_tests, 0, 0, "halo,one-sender,pack",
     "tests to run (default: halo,one-sender; --layout array: halo,pack)"},
    {"seed", 0, MB_OPT_INT, &seed, 0, 2147483647, NULL, "seed of the random rank ordering (1)"},
    {"win", 0, MB_OPT_CHOICE, &win_flavor, 0, 0, "create,allocate",
     "RMA window flavour: MPI_Win_create or MPI_Win_allocate (allocate)"},
    {"assert", 0, MB_OPT_LIST, &rma_assert, 0, 0, "noprecede,nosucceed,nocheck",
     "RMA assertions: MPI_MODE_NOPRECEDE/NOSUCCEED on fences, NOCHECK on locks (none)"},
    {"group", 0, MB_OPT_CHOICE, &group_choice, 0, 0, "all,comm,none",
     "tests measured together, interleaved, so that their comparisons are paired: every method on every "
     "communicator at one stencil, periodicity and size (all), one communicator's methods (comm), or each test "
     "alone (none) (all)"},
    {"layout", 0, MB_OPT_CHOICE, &layout, 0, 0, "buffers,array",
     "what is exchanged: a separate buffer per direction (buffers), or the faces, edges and corners of a local "
     "array with one ghost layer (array: docs/halo-array.md) (buffers)"},
    {"packing", 0, MB_OPT_LIST, &sel_packing, 0, 0, "datatype,pack,mpi-pack",
     "--layout array: how a face becomes a message: subarray datatypes in place, copy loops, MPI_Pack "
     "(default: all)"},
    {"extents", 0, MB_OPT_STRING, &extents_arg, 0, 0, NULL,
     "--layout array: the interior extents AxB (2-D) or AxBxC (3-D), instead of --count doubles per face"},
    {"partitions", 0, MB_OPT_INT, &partitions, 1, MAXCOUNT, NULL,
     PARTITIONED ": the parts each face is split into, marked ready one by one with MPI_Pready, as threads "
     "filling it would; must divide every face (4)"},
    {"unsafe", 0, MB_OPT_FLAG, &unsafe, 0, 0, NULL, "allow the deliberately unsafe method " NAIVE " (may deadlock)"},
    {"phases", 0, MB_OPT_FLAG, &phases, 0, 0, NULL,
     "time the phases of every exchange: post receives, pack and post sends, wait, unpack (docs/halo-phases.md)"},
    {"phases-cost", 0, MB_OPT_FLAG, &phases_cost, 0, 0, NULL,
     "what --phases costs here: every halo test twice in its group, phases=off and phases=on, paired round by round "
     "(bench/README.md)"},
    {"mock", 0, MB_OPT_FLAG, &mock, 0, 0, NULL,
     "--layout array: pack and unpack but send nothing, to see whether packing or the network dominates"},
    {0},
};

/* The stencils of the chosen dimensions, faces first; 1-D has one. */
static int stencils_of(int nd, int out[2])
{
    out[0] = halo_faces(nd);
    out[1] = halo_all(nd);
    return out[1] == out[0] ? 1 : 2;
}

static int stencil_bit(int nnbr)
{
    for (int i = 0; i < NSTENCIL; i++)
        if (halo_stencils[i] == nnbr) return i;
    return -1;
}

static void list(void)
{
    printf("tests: halo, one-sender, pack (--layout array)\nmethods:");
    for (int i = 0; i < nmethods; i++)
        printf(" %s%s", methods[i]->name, strcmp(methods[i]->name, NAIVE) ? "" : " (needs --unsafe)");
    printf("\ncomms:");
    for (int c = 0; c < NCOMM; c++) printf(" %s", halo_comm_names[c]);
    printf("\ndims: 1 2 3\nneighbors: 2 (--dims 1), 4 8 (--dims 2), 6 26 (--dims 3)\nperiodic: no yes\n");
}

/* The option choices that come from tables: methods and stencils. */
static void collect_choices(void)
{
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const struct halo_method *m = families[f]; m->name; m++) {
            methods[nmethods++] = m;
            n += (size_t)snprintf(method_choices + n, sizeof method_choices - n, "%s%s", n ? "," : "", m->name);
        }
    n = 0;
    for (int i = 0; i < NSTENCIL; i++)
        n += (size_t)snprintf(stencil_choices + n, sizeof stencil_choices - n, "%s%d", i ? "," : "", halo_stencils[i]);
}

static int method_index(const char *name)
{
    for (int i = 0; i < nmethods; i++)
        if (!strcmp(methods[i]->name, name)) return i;
    return -1;
}

static int naive_index(void) { return method_index(NAIVE); }

/* --extents AxB[xC]: ndims numbers >= 1; NULL or why not. */
static const char *parse_extents(void)
{
    static char msg[160];
    const char *p = extents_arg;
    int n = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 24 || n == MAXDIM || (*end && *end != 'x')) {
            snprintf(msg, sizeof msg, "--extents: expected %ld extents >= 1 joined by 'x' (e.g. %s), got '%s'",
                     ndims, ndims == 3 ? "64x64x64" : "512x512", extents_arg);
            return msg;
        }
        extents[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n != ndims) {
        snprintf(msg, sizeof msg, "--extents: --dims %ld needs %ld extents, got '%s'", ndims, ndims, extents_arg);
        return msg;
    }
    int out[MAXDIM];
    return halo_array_extents((int)ndims, 0, extents, out);
}

/* --mock packs and unpacks around no communication: only where halocompare packs (docs/halo-phases.md). */
static const char *validate_mock(void)
{
    if (!mock) return NULL;
    if (layout != LAYOUT_ARRAY) return "--mock needs --layout array (separate buffers are not packed: nothing to time)";
    if (sel_packing & 1u << PACK_DATATYPE && sel_packing != ~0ul)
        return "--mock cannot mock --packing datatype (the MPI library packs inside the call it skips)";
    if (sel_tests && sel_tests != ~0ul && !(sel_tests & 1)) return "--mock mocks the halo test: add --tests halo";
    return NULL;
}

static const char *validate_layout(void)
{
    if (layout != LAYOUT_ARRAY) {
        if (sel_packing) return "--packing needs --layout array (separate buffers are sent as they are)";
        if (extents_arg) return "--extents needs --layout array";
        if (sel_tests & 4 && sel_tests != ~0ul) return "--tests pack needs --layout array";
        return NULL;
    }
    int n[MAXDIM];
    const char *why = halo_array_extents((int)ndims, count ? count : DEFAULT_COUNT, NULL, n);
    if (why) return why;
    if (sel_tests & 2 && sel_tests != ~0ul)
        return "--tests one-sender sends separate buffers: it does not take --layout array";
    if (extents_arg && count) return "--extents and --count are alternatives: give one of them";
    return extents_arg ? parse_extents() : NULL;
}

/* "all" (every bit set) never selects the unsafe method; naming it needs
 * --unsafe.  A stencil must be one of the chosen dimensions'. */
static const char *validate(void)
{
    static char msg[128];
    int st[2], ns = stencils_of((int)ndims, st);
    const char *why = validate_layout();
    if (!why) why = validate_mock();
    if (why) return why;
    if (!unsafe && sel_methods != ~0ul && (sel_methods >> naive_index() & 1))
        return "--methods " NAIVE " needs --unsafe (it deadlocks above the eager limit)";
    if (partitions && sel_methods && sel_methods != ~0ul && !(sel_methods >> method_index(PARTITIONED) & 1))
        return "--partitions is for the " PARTITIONED " method: add it to --methods";
    for (int i = 0; i < NSTENCIL && sel_nbrs != ~0ul; i++)
        if ((sel_nbrs >> i & 1) && halo_stencils[i] != st[0] && halo_stencils[i] != st[ns - 1]) {
            int n = snprintf(msg, sizeof msg, "--neighbors %d does not apply to --dims %ld (choose from: %d",
                             halo_stencils[i], ndims, st[0]);
            if (ns > 1)
                snprintf(msg + n, sizeof msg - (size_t)n, ", %d)", st[1]);
            else
                snprintf(msg + n, sizeof msg - (size_t)n, ")");
            return msg;
        }
    return NULL;
}

static const struct mb_program program = {
    .name = "halocompare",
    .summary = "halo exchange in 1, 2 or 3 dimensions: methods x communicators x stencils x periodic, in MB/s per "
               "process",
    .options = options,
    /* -m MIN:MAX sweeps the message size; size_min > size_max means "not
     * given" (a range typed by the user always has MIN <= MAX) */
    .flags = MB_USES_SIZES | MB_WINDOW_BY_DEFAULT | MB_OVERLAP,
    .size_min = 1,
    .size_max = 0,
    .thread_level = MPI_THREAD_SINGLE,
    .list = list,
    .validate = validate,
    .acts_with = (const char *const[]){"packing", "layout=array", NULL},
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
    if (h->arr) {
        halo_array_fill(h, it);
        return;
    }
    for (int i = 0; i < h->ndirs; i++) {
        int d = h->dirs[i];
        mb_pattern_fill_doubles(h->sbuf[d], (size_t)h->count, (uint32_t)h->rank, (uint32_t)d, (uint32_t)it);
        for (int k = 0; k < h->count; k++) h->rbuf[d][k] = -1.0; /* never a pattern value */
    }
}

/* rbuf[d] must hold what partner[d] sent towards us (direction opp[d]). */
static int check_dir(struct halo *h, int d, long it, char *msg, size_t len)
{
    int o = h->opp[d];
    long bad = mb_pattern_check_doubles(h->rbuf[d], (size_t)h->count, (uint32_t)h->partner[d], (uint32_t)o,
                                        (uint32_t)it);
    if (bad < 0) return 0;
    snprintf(msg, len, "from neighbour %d (%s): first bad index %ld: got %.17g, expected %.17g", h->partner[d],
             h->dir_name[d], bad, h->rbuf[d][bad],
             mb_pattern_double((uint32_t)h->partner[d], (uint32_t)o, (uint32_t)it, (size_t)bad));
    return 1;
}

/* Checks every direction (halo) or only those whose partner is the sender. */
static int check(void *state, long it, char *msg, size_t len)
{
    struct call *c = state;
    if (c->h->arr) return halo_array_check(c->h, it, msg, len);
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
    halo_phases_start(c->h);
    if (c->h->arr)
        halo_array_run(c->h, c->m, iters);
    else
        c->m->run(c->h, iters);
}

static void phases_of(void *state, double *secs) { halo_phases_take(((struct call *)state)->h, secs); }

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
                MPI_Irecv(h->rbuf[d], h->count, MPI_DOUBLE, c->sender, h->opp[d], h->comm, &h->req[n++]);
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

static void describe(const struct mb_run *run, struct mb_row *row, const struct halo *h)
{
    snprintf(row->comm, sizeof row->comm, "%s", h->comm_name);
    row->neighbors = h->nnbr;
    row->periodic = h->periodic;
    row->threads = 1;
    row->bytes = (long long)(h->arr ? halo_array_face(h->arr) : h->count) * 8;
    mb_param_opt(run, row, "dims");
    if (h->arr) {
        mb_param_opt(run, row, "layout");
        if (extents_arg) mb_param_opt(run, row, "extents");
    }
}

/* Bytes one process sends per exchange: the most neighbours any process has. */
static double sent_bytes(const struct halo *h)
{
    long mine = h->arr ? halo_array_sent(h) : (long)h->ndirs * h->count, most;
    MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, h->comm);
    return (double)most * 8;
}

static double *sbuf_own[MAXDIR], *rbuf_own[MAXDIR];
static double *array_mem; /* --layout array: the local array, for the largest size */

/* The tests one finding compares are measured as one group, interleaved
 * (mb_measure_group): every selected method on every selected communicator
 * at one stencil, periodicity and size, so that both the methods and the
 * rank orderings are compared round by round (paired).  That needs every
 * member set up at once (its own RMA window, persistent requests, topology
 * communicator): where their memory on the busiest node would pass
 * GROUP_BYTES, the group is one communicator's methods, and failing that
 * one test (docs/halo-groups.md). */
#define GROUP_BYTES (256.0 * 1024 * 1024)

/* The memory a method sets up for itself, per process (the p2p methods use
 * the shared buffers). */
static double method_bytes(const struct halo_method *m, const struct halo *h)
{
    double msg = (double)h->count * 8;
    if (!strncmp(m->name, "rma-lock", 8)) return 2 * h->nnbr * msg + 8.0 * h->nnbr; /* two sets + flags */
    if (!strncmp(m->name, "rma-", 4)) return h->nnbr * msg;
    if (halo_method_in(halo_neighbor_methods, m->name)) return 2 * h->ndirs * msg;
    return 0;
}

enum { SWEEPS = 64 * NPACK };

/* A member of a group: its own copy of the halo (methods repoint its
 * buffers and keep their state in it) and what its kernel sees. */
struct member {
    struct halo h;
    struct call c;
    struct halo_phases ph; /* --phases */
};

static void measure_group(struct mb_run *run, struct mb_kernel *k, struct mb_row *rows, int n)
{
    if (group_choice == GROUP_NONE && n == 1) /* each test alone: no group, no rounds */
        mb_measure(run, &k[0], &rows[0]);
    else
        mb_measure_group(run, k, rows, n);
    for (int j = 0; j < n; j++) mb_end(run, &rows[j]);
}

/* --overlap: the group's methods that call mb_compute() between posting and
 * waiting (a method that never does has nothing to hide: it gets no row;
 * found by one untimed exchange), again as a group, each computing
 * --overlap x its own time per exchange (rows[j]'s median). */
static void run_overlap(struct mb_run *run, struct member *mem, const struct mb_kernel *k, const struct mb_row *rows,
                        int n)
{
    struct mb_kernel *ok = calloc((size_t)n + 1, sizeof *ok);
    struct mb_row *orow = calloc((size_t)n + 1, sizeof *orow);
    int m = 0, path[MB_ORDER_DEPTH];
    memcpy(path, run->order_path, sizeof path);
    for (int j = 0; j < n; j++) {
        long c0 = mb_compute_calls();
        method_run(&mem[j].c, 1);
        int mine = mb_compute_calls() > c0, hook;
        MPI_Allreduce(&mine, &hook, 1, MPI_INT, MPI_MAX, run->world);
        if (!hook) continue;
        mb_overlap_row(&rows[j], &orow[m]);
        run->ntotal++; /* the progress line's plan learns of the row only now */
        memcpy(run->order_path, rows[j].order, sizeof run->order_path); /* its place: its method's */
        mb_begin(run, &orow[m]);
        ok[m] = k[j];
        ok[m].sweep = NULL; /* its own budget: the sweep's belongs to the methods' rows */
        ok[m].compute_s = mb_overlap_compute_s(run, &rows[j]);
        m++;
    }
    if (m) measure_group(run, ok, orow, m);
    memcpy(run->order_path, path, sizeof path);
    free(ok);
    free(orow);
}

/* One group: the methods `meth` (-1 ends; -2: every selected one) on the
 * communicators cks[0..ncks-1], whose neighbour maps are hc[ck] at this
 * size.  Set up in order (a method that cannot run is its n/a row at
 * once), measured interleaved, torn down.  sw[ck][i]: the size sweep of
 * method i on communicator ck. */
static void run_group(struct mb_run *run, struct halo *hc, const int *cks, int ncks, int meth,
                      struct mb_sweep (*sw)[SWEEPS])
{
    /* --phases-cost: each test twice (copy 0 without phases, 1 with), the innermost part of j */
    int npk = layout == LAYOUT_ARRAY ? NPACK : 1, nc = 1 + phases_cost, cap = ncks * nmethods * npk * nc, n = 0;
    struct member *mem = calloc((size_t)cap, sizeof *mem);
    struct mb_kernel *k = calloc((size_t)cap, sizeof *k);
    struct mb_row *rows = calloc((size_t)cap, sizeof *rows);
    for (int a = 0; a < ncks; a++) {
        const int ck = cks[a];
        struct halo *base = &hc[ck];
        double sent = sent_bytes(base);
        for (int j = 0; j < nmethods * npk * nc; j++) {
            /* --layout array: every method with every packing (pk), which is j's inner part */
            const int i = j / nc / npk, pk = npk > 1 ? j / nc % npk : -1, timed = phases || j % nc;
            if (!(sel_methods >> i & 1) || (meth >= 0 && i != meth) || (pk >= 0 && !(sel_packing >> pk & 1)))
                continue;
            /* the row's place in the fixed order: communicator (depth 1) and method (depth 4) */
            run->order_path[1] = ck;
            run->order_path[4] = j;
            struct mb_row *row = &rows[n];
            mb_row_init(row, "halo", methods[i]->name);
            describe(run, row, base);
            if (pk >= 0) mb_param(row, "packing", "%s", halo_packing_names[pk]);
            if (!strncmp(methods[i]->name, "rma-", 4)) {
                if (pk == PACK_DATATYPE) /* the window is the array: rma.c */
                    mb_param(row, "win", "create");
                else
                    mb_param_opt(run, row, "win");
                mb_param_opt(run, row, "assert");
            }
            if (ck == COMM_RANDOM) mb_param_opt(run, row, "seed");
#ifdef MB_SIMULATED
            if (ck == COMM_CART && !halo_sim_cart_why) mb_param(row, "cart_model", "%s", getenv("MPIMB_SIM_CART"));
#endif
            if (halo_method_in(halo_partitioned_methods, methods[i]->name))
                mb_param(row, "partitions", "%d", base->partitions);
            if (mock) mb_param(row, "mock", "yes");
            const char *no_phases = timed && !mock ? methods[i]->no_phases : NULL; /* mock: only pack, unpack */
            if (phases_cost) mb_param(row, "phases", "%s", j % nc ? "on" : "off");
            if (no_phases) mb_param(row, "phase_na", "%s", no_phases);
            row->sent_bytes = sent;
            memcpy(row->order, run->order_path, sizeof row->order);
            mb_begin(run, row);
            struct member *x = &mem[n];
            x->h = *base;
            x->h.priv = NULL;
            memcpy(x->h.sbuf, sbuf_own, sizeof sbuf_own);
            memcpy(x->h.rbuf, rbuf_own, sizeof rbuf_own);
            if (pk >= 0)
                halo_array_bind(&x->h, pk);
            else
                halo_buffers_bind(&x->h);
            const char *why = NULL;
#ifdef MB_SIMULATED
            /* SMPI's MPI_Cart_create ignores reorder: cart would be world under another name,
             * unless the platform models the machine's mapping (grid.c) */
            if (ck == COMM_CART) why = halo_sim_cart_why;
#endif
            if (!why && methods[i]->setup) why = methods[i]->setup(&x->h);
            if (why) {
                mb_na(run, row, "%s", why);
                mb_end(run, row);
                continue;
            }
            x->c = (struct call){&x->h, methods[i], -1};
            x->h.mock = mock;
            x->h.ph = timed && !no_phases ? &x->ph : NULL;
            /* --mock sends nothing: the ghost cells keep what the buffers held, nothing to verify */
            k[n] = (struct mb_kernel){.state = &x->c, .comm = x->h.comm, .run = method_run, .fill = mock ? NULL : fill,
                                      .check = mock ? NULL : check, .sweep = &sw[ck][j]};
            if (x->h.ph) {
                k[n].nphases = NPH;
                k[n].phase_names = halo_phase_names;
                k[n].phases = phases_of;
            }
            n++;
        }
    }
    measure_group(run, k, rows, n);
    if (run->opts.overlap > 0) run_overlap(run, mem, k, rows, n);
    for (int j = 0; j < n; j++)
        if (mem[j].c.m->teardown) mem[j].c.m->teardown(&mem[j].h);
    free(mem);
    free(k);
    free(rows);
}

static void run_halo_apart(struct mb_run *run, struct halo *hc, const int *cks, int ncks, double most,
                           struct mb_sweep (*sw)[SWEEPS]);

/* Every halo test of one periodicity: per stencil and size, the groups.
 * cks: the selected communicators, in the order they run (--order shuffle). */
static void run_halo(struct mb_run *run, struct halo *hc, const MPI_Comm *comms, const int *cks, int ncks,
                     int nd, int p, const int *nbrs, int nnbrs, const long *counts, int nsizes)
{
    for (int nb = 0; nb < nnbrs; nb++) {
        mb_order(run, 2, nnbrs, nb, 1);
        for (int a = 0; a < ncks; a++) halo_neighbors(&hc[cks[a]], comms[cks[a]], nd, p, nbrs[nb]);
        struct mb_sweep (*sw)[SWEEPS] = calloc(NCOMM, sizeof *sw); /* per communicator, method (and packing) */
        for (int s = 0; s < nsizes; s++) {
            mb_order(run, 3, nsizes, s, 1);
            double most = 0, all = 0; /* the methods' own memory: one communicator's, all of them */
            struct halo_array *arr = NULL;
            if (layout == LAYOUT_ARRAY) { /* one array (shared memory) for every test of this stencil and size */
                int n[MAXDIM];
                halo_array_extents(nd, counts[s], extents_arg ? extents : NULL, n);
                arr = halo_array_new(&hc[cks[0]], n, array_mem);
            }
            for (int a = 0; a < ncks; a++) {
                double one = 0;
                hc[cks[a]].count = arr ? (int)halo_array_face(arr) : (int)counts[s];
                hc[cks[a]].arr = arr;
                for (int i = 0; i < nmethods; i++)
                    if (sel_methods >> i & 1) one += method_bytes(methods[i], &hc[cks[a]]) * (arr ? NPACK : 1);
                all += one;
                most = one > most ? one : most;
            }
            /* the same choice on every rank: ppn and the sizes are common */
            if (group_choice == GROUP_ALL && all * run->ppn <= GROUP_BYTES)
                run_group(run, hc, cks, ncks, -2, sw);
            else
                run_halo_apart(run, hc, cks, ncks, most, sw);
            halo_array_free(arr);
        }
        free(sw);
    }
}

/* The groups of one stencil and size, where they cannot be one: each
 * communicator's methods together, else each method alone. */
static void run_halo_apart(struct mb_run *run, struct halo *hc, const int *cks, int ncks, double most,
                           struct mb_sweep (*sw)[SWEEPS])
{
            for (int a = 0; a < ncks; a++) {
                if (group_choice != GROUP_NONE && most * run->ppn <= GROUP_BYTES) {
                    run_group(run, hc, &cks[a], 1, -2, sw);
                    continue;
                }
                for (int j = 0; j < nmethods; j++) { /* --order shuffle: the methods of one communicator */
                    const int i = mb_order(run, 4, nmethods, j, 0);
                    if (sel_methods >> i & 1) run_group(run, hc, &cks[a], 1, i, sw);
                }
            }
}

/* The centre process (every coordinate at half its extent) sends alone. */
static void run_one_sender(struct mb_run *run, struct halo *h, struct mb_sweep *sw)
{
    struct call c = {h, NULL, 0};
    for (int i = 0; i < h->ndims; i++) c.sender = c.sender * h->dims[i] + h->dims[i] / 2;
    int n = h->rank == c.sender ? h->ndirs : 0, sends;
    MPI_Allreduce(&n, &sends, 1, MPI_INT, MPI_MAX, h->comm);
    struct mb_row row;
    mb_row_init(&row, "one-sender", "isend");
    describe(run, &row, h);
    row.sent_bytes = (double)sends * h->count * 8;
    mb_begin(run, &row);
    memcpy(h->sbuf, sbuf_own, sizeof sbuf_own);
    memcpy(h->rbuf, rbuf_own, sizeof rbuf_own);
    struct mb_kernel k = {.state = &c, .comm = h->comm, .run = one_sender_run, .fill = fill, .check = check, .sweep = sw};
    mb_measure(run, &k, &row);
    mb_end(run, &row);
}

static int popcount(unsigned long m) { return __builtin_popcountl(m); }

/* The partitioned method, asked for by name or by --partitions: every face
 * of every size must split into the partitions (else a usage error); with
 * --methods all and the default, a size they do not divide is its n/a row
 * (partitioned.c).  Faces: --count doubles, or the array's faces. */
static void check_partitions(struct mb_run *run, int nd, const long *counts, int nsizes)
{
    int named = sel_methods != ~0ul && (sel_methods >> method_index(PARTITIONED) & 1);
    long p = partitions ? partitions : DEFAULT_PARTITIONS;
    if (!named && !partitions) return;
    for (int s = 0; s < nsizes; s++) {
        int n[MAXDIM];
        long faces[MAXDIM] = {counts[s]};
        int nf = 1;
        if (layout == LAYOUT_ARRAY && !halo_array_extents(nd, counts[s], extents_arg ? extents : NULL, n))
            for (nf = 0; nf < nd; nf++) { /* the face across dimension nf */
                faces[nf] = 1;
                for (int k = 0; k < nd; k++) faces[nf] *= k == nf ? 1 : n[k];
            }
        for (int f = 0; f < nf; f++)
            if (faces[f] % p)
                mb_usage_error(run, "--partitions %ld%s does not divide a face of %ld doubles: choose a divisor of "
                               "every face", p, partitions ? "" : " (the default)", faces[f]);
    }
}

/* The message sizes, in doubles: --count, or -m MIN:MAX doubling from MIN
 * (whole doubles: MIN a multiple of 8 bytes, so every size is). */
static int plan_sizes(struct mb_run *run, long counts[64])
{
    struct mb_opts *o = &run->opts;
    int n = 0;
    if (o->size_min > o->size_max) { /* no -m */
        counts[n++] = count ? count : DEFAULT_COUNT;
        o->size_min = o->size_max = (size_t)counts[0] * 8; /* the metadata's "sizes": what ran */
        return n;
    }
    if (count) mb_usage_error(run, "--count and --sizes are alternatives: give one of them");
    if (extents_arg) mb_usage_error(run, "--extents and --sizes are alternatives: give one of them");
    if (o->size_min < 8 || o->size_min % 8)
        mb_usage_error(run, "--sizes: messages are whole doubles: MIN must be a multiple of 8 bytes, got %zu",
                       o->size_min);
    if (o->size_max > (size_t)MAXCOUNT * 8)
        mb_usage_error(run, "--sizes: messages are at most %zu bytes (2^24 doubles), got a maximum of %zu",
                       (size_t)MAXCOUNT * 8, o->size_max);
    for (size_t b = o->size_min; b <= o->size_max; b *= 2) counts[n++] = (long)(b / 8);
    return n;
}

/* What this run measures (the options resolved): sizes, stencils, periodicities, and the rows they make. */
struct plan {
    long counts[64];
    int nsizes, nd, nbrs[2], nnbrs, first_p, last_p;
};

static void plan(struct mb_run *run, struct plan *pl)
{
    int st[2];
    pl->nsizes = plan_sizes(run, pl->counts);
    pl->nd = (int)ndims;
    int nst = stencils_of(pl->nd, st);
    check_partitions(run, pl->nd, pl->counts, pl->nsizes);
    if (!sel_methods) sel_methods = (1ul << nmethods) - 1;
    if (!sel_comms) sel_comms = (1ul << NCOMM) - 1;
    if (!sel_tests || sel_tests == ~0ul) sel_tests = layout == LAYOUT_ARRAY ? 5 : 3;
    if (!sel_packing) sel_packing = mock ? ~(1ul << PACK_DATATYPE) : ~0ul; /* --mock: the packings it can mock */
    sel_methods &= (1ul << nmethods) - 1;
    if (!unsafe) sel_methods &= ~(1ul << naive_index());
    pl->nnbrs = 0; /* the stencils to run */
    for (int i = 0; i < nst; i++)
        if (!sel_nbrs || (sel_nbrs >> stencil_bit(st[i]) & 1)) pl->nbrs[pl->nnbrs++] = st[i];
    pl->first_p = periodic_choice == 1 ? 1 : 0;
    pl->last_p = periodic_choice == 0 ? 0 : 1;
    int nblocks = pl->last_p - pl->first_p + 1, nsizes = pl->nsizes, nnbrs = pl->nnbrs;
    int npack = layout == LAYOUT_ARRAY ? popcount(sel_packing & ((1ul << NPACK) - 1)) : 1;
    run->ntotal = (sel_tests & 1) ? nblocks * popcount(sel_comms) * nnbrs * nsizes * popcount(sel_methods) * npack
                                       * (1 + phases_cost) : 0;
    run->ntotal += (sel_tests & 2) ? nblocks * nnbrs * nsizes : 0;
    run->ntotal += (sel_tests & 4) ? nnbrs * nsizes * 3 : 0;
}

/* The message buffers (the largest size's, one pair per direction) and, with --layout array, the array. */
static void allocate(struct mb_run *run, const struct plan *pl, struct halo *h)
{
    size_t most = (size_t)pl->counts[pl->nsizes - 1] * sizeof(double);
    for (int d = 0; d < pl->nbrs[pl->nnbrs - 1]; d++) {
        h->sbuf[d] = sbuf_own[d] = mb_alloc(most);
        h->rbuf[d] = rbuf_own[d] = mb_alloc(most);
    }
    if (layout != LAYOUT_ARRAY) return;
    size_t most_doubles = 0; /* one array for every test: the largest size's */
    for (int s = 0; s < pl->nsizes; s++) {
        int n[MAXDIM];
        const char *why = halo_array_extents(pl->nd, pl->counts[s], extents_arg ? extents : NULL, n);
        if (why) mb_usage_error(run, "%s", why);
        size_t t = halo_array_doubles(pl->nd, n);
        most_doubles = t > most_doubles ? t : most_doubles;
    }
    array_mem = mb_alloc(most_doubles * sizeof(double));
}

/* One periodicity: its communicators made at once (their tests are measured together), then in the order
 * --order gives the communicators (the one-sender tests one more item) the halo groups and the one-sender
 * tests; stencils and message sizes keep their order, the methods are interleaved.  notes: per
 * communicator, what its creation said (the cart's reordering, the node ordering). */
static void run_periodicity(struct mb_run *run, const struct plan *pl, int p, struct halo *h, char notes[NCOMM][160])
{
    struct halo hc[NCOMM]; /* each communicator's neighbour map */
    mb_order(run, 0, pl->last_p - pl->first_p + 1, p - pl->first_p, 1);
    MPI_Comm comms[NCOMM];
    int cks[NCOMM], ncks = 0, halo_done = 0;
    for (int ck = 0; ck < NCOMM; ck++) {
        comms[ck] = MPI_COMM_NULL;
        if (!(sel_tests & 1) || !(sel_comms >> ck & 1)) continue;
        comms[ck] = halo_comm_create((enum comm_kind)ck, run, pl->nd, p, (unsigned long)seed, notes[ck], 160);
        hc[ck] = (struct halo){.win_flavor = h->win_flavor, .rma_assert = h->rma_assert,
                               .comm_name = halo_comm_names[ck],
                               .partitions = (int)(partitions ? partitions : DEFAULT_PARTITIONS)};
    }
    for (int jc = 0; jc <= NCOMM; jc++) {
        const int ck = mb_order(run, 1, NCOMM + 1, jc, 0);
        for (int q = 0; jc == 0 && q <= NCOMM; q++) { /* the loop's order, drawn at its start */
            int c = run->order_perm[1] ? run->order_perm[1][q] : q;
            if (c < NCOMM && comms[c] != MPI_COMM_NULL) cks[ncks++] = c;
        }
        if (ck == NCOMM) {
            for (int nb = 0; nb < pl->nnbrs && (sel_tests & 2); nb++) {
                mb_order(run, 2, pl->nnbrs, nb, 1);
                h->comm_name = "world";
                halo_neighbors(h, MPI_COMM_WORLD, pl->nd, p, pl->nbrs[nb]);
                struct mb_sweep sw = {0};
                for (int s = 0; s < pl->nsizes; s++) {
                    mb_order(run, 3, pl->nsizes, s, 1);
                    h->count = (int)pl->counts[s];
                    run_one_sender(run, h, &sw);
                }
            }
            continue;
        }
        if (!halo_done && ncks)
            run_halo(run, hc, comms, cks, ncks, pl->nd, p, pl->nbrs, pl->nnbrs, pl->counts, pl->nsizes);
        halo_done = 1;
    }
    for (int ck = 0; ck < NCOMM; ck++)
        if (comms[ck] != MPI_COMM_NULL && comms[ck] != MPI_COMM_WORLD) MPI_Comm_free(&comms[ck]);
}

/* What the reader of the table needs to know about the grid and the orderings: the JSON's "halocompare",
 * and the tables on stdout. */
static void report(struct mb_run *run, const struct plan *pl, const struct halo *h, char notes[2][NCOMM][160])
{
    char meta[1280], rma_note[128], grid[64], dims_json[64], sizes[32 * 12] = "";
    int gdims[MAXDIM], nd = pl->nd;
    halo_grid(run->nprocs, nd, gdims);
    for (int i = 0, g = 0, j = 0; i < nd; i++) {
        g += snprintf(grid + g, sizeof grid - (size_t)g, "%s%d", i ? "x" : "", gdims[i]);
        j += snprintf(dims_json + j, sizeof dims_json - (size_t)j, "%s%d", i ? ", " : "", gdims[i]);
    }
    for (int s = 0, n = 0; s < pl->nsizes; s++) { /* bytes per message: --layout array, a face */
        int ext[MAXDIM];
        long b = pl->counts[s] * 8;
        if (layout == LAYOUT_ARRAY && !halo_array_extents(nd, pl->counts[s], extents_arg ? extents : NULL, ext))
            b = (long)halo_face_of(nd, ext) * 8;
        n += snprintf(sizes + n, sizeof sizes - (size_t)n, "%s%ld", s ? ", " : "", b);
    }
    unsigned a = h->rma_assert;
    snprintf(rma_note, sizeof rma_note, "%s%s%s", a & HALO_ASSERT_NOPRECEDE ? ",noprecede" : "",
             a & HALO_ASSERT_NOSUCCEED ? ",nosucceed" : "", a & HALO_ASSERT_NOCHECK ? ",nocheck" : "");
    snprintf(meta, sizeof meta,
             "{\"ndims\": %d, \"dims\": [%s], \"count\": %ld, \"bytes\": [%s], \"seed\": %ld, "
             "\"cart_reordered\": {\"non_periodic\": \"%s\", \"periodic\": \"%s\"}, \"node_ordering\": \"%s\", "
             "\"win\": \"%s\", \"assert\": \"%s\", \"group\": \"%s\", \"layout\": \"%s\", \"extents\": \"%s\"}",
             nd, dims_json, pl->counts[0], sizes, seed, notes[0][COMM_CART], notes[1][COMM_CART],
             notes[pl->first_p][COMM_NODE], win_names[win_flavor], a ? rma_note + 1 : "none",
             group_names[group_choice], layout == LAYOUT_ARRAY ? "array" : "buffers", extents_arg ? extents_arg : "");
    char rma_line[160];
    snprintf(rma_line, sizeof rma_line, "RMA: window MPI_Win_%s, assertions %s", win_names[win_flavor],
             a ? rma_note + 1 : "none");
    mb_meta_add(run, "halocompare", meta);
    const char *cart_note[2] = {notes[0][COMM_CART], notes[1][COMM_CART]};
    if (run->rank == 0 && layout == LAYOUT_ARRAY)
        halo_array_report(run, grid);
    else if (run->rank == 0)
        halo_report(run, cart_note, rma_line, grid);
    if (run->rank == 0 && (phases || phases_cost)) halo_phase_report(run);
}

/* options -> plan -> buffers -> measure (per periodicity; the packing tests) -> report */
int main(int argc, char **argv)
{
    collect_choices();
    struct mb_run *run = mb_init(&argc, &argv, &program);
    if (mock && run->opts.overlap > 0) mb_usage_error(run, "--mock has no communication for --overlap to hide computation behind");
    struct plan pl;
    plan(run, &pl);
    struct halo h = {.win_flavor = win_flavor, .rma_assert = (unsigned)rma_assert & 7u};
    allocate(run, &pl, &h);
    char notes[2][NCOMM][160] = {{{0}}};
    for (int p = pl.first_p; p <= pl.last_p; p++) run_periodicity(run, &pl, p, &h, notes[p]);
    if (sel_tests & 4)
        halo_pack_tests(run, pl.nd, pl.nbrs, pl.nnbrs, pl.counts, pl.nsizes, extents_arg ? extents : NULL, array_mem);
    report(run, &pl, &h, notes);
    free(array_mem);
    for (int d = 0; d < MAXDIR; d++) {
        free(sbuf_own[d]);
        free(rbuf_own[d]);
    }
    return mb_finish(run);
}
