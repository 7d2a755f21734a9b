/* rma — one-sided operations under every synchronisation mode and window
 * flavour, each beside the send/receive figure for the same size measured
 * in the same run.  A test is (operation, latency|bw, window, sync, size);
 * all of them are composed from the tables in ops.c, sync.c, windows.c. */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

enum { NKIND = 2 }; /* latency, bw */
static const char *const kind_name[NKIND] = {"latency", "bw"};

static unsigned long sel_ops, sel_syncs, sel_windows, sel_tests;
static int pairs_choice; /* 0 one, 1 many-to-one */
static long epoch_ops = 64;
static int no_reference;

static char op_choices[256], sync_choices[256], win_choices[256];

static const struct mb_option options[] = {
    {"ops", 0, MB_OPT_LIST, &sel_ops, 0, 0, op_choices, "operations (default: all)"},
    {"syncs", 0, MB_OPT_LIST, &sel_syncs, 0, 0, sync_choices,
     "synchronisation modes (default: all; load-store only on allocate-shared windows)"},
    {"windows", 0, MB_OPT_LIST, &sel_windows, 0, 0, win_choices, "window flavours (default: all)"},
    {"tests", 0, MB_OPT_LIST, &sel_tests, 0, 0, "latency,bw",
     "latency: one operation per epoch; bw: --epoch-ops operations per epoch (default: both)"},
    {"pairs", 0, MB_OPT_CHOICE, &pairs_choice, 0, 0, "one,many-to-one",
     "one: rank 0 -> rank 1; many-to-one: every other rank -> rank 0 at once (default: one)"},
    {"epoch-ops", 'W', MB_OPT_INT, &epoch_ops, 1, 4096, NULL,
     "operations per epoch (and messages per window of the send/recv reference) in bw tests (64)"},
    {"no-reference", 0, MB_OPT_FLAG, &no_reference, 0, 0, NULL, "skip the send/recv reference rows"},
    {0},
};

static void join(char *buf, size_t len, const char *name, int i)
{
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", i ? "," : "", name);
}

static void collect_names(void)
{
    for (int i = 0; rma_ops[i].name; i++) join(op_choices, sizeof op_choices, rma_ops[i].name, i);
    for (int i = 0; rma_syncs[i].name; i++) join(sync_choices, sizeof sync_choices, rma_syncs[i].name, i);
    for (int i = 0; rma_windows[i].name; i++) join(win_choices, sizeof win_choices, rma_windows[i].name, i);
}

static void list(void)
{
    printf("tests: latency bw (test column: <op>-latency, <op>-bw)\nops: %s\nsyncs (method column): %s, and "
           "sendrecv for the reference\nwindows (comm column): %s, and p2p for the reference\n",
           op_choices, sync_choices, win_choices);
}

static const struct mb_program program = {
    .name = "rma",
    .summary = "MPI one-sided operations x synchronisation modes x window flavours, against send/recv",
    .options = options,
    .flags = MB_USES_SIZES,
    .size_min = 8,
    .size_max = 1 << 20,
    .quick_size_max = 64,
    .thread_level = MPI_THREAD_SINGLE,
    .list = list,
};

/* ------------------------------------------------------------- kernels */

static void rma_fill(void *state, long it)
{
    struct rma *r = state;
    r->op->fill(r, it);
}

static int rma_check(void *state, long it, char *msg, size_t len)
{
    struct rma *r = state;
    MPI_Barrier(r->comm); /* passive target: the origins' epochs are over */
    return r->op->check(r, it, msg, len);
}

/* Any rank's MPI error -> the same reason on every rank; 0 if none. */
static int agree_error(struct rma *r, char *why, size_t len)
{
    int who = r->err ? r->rank : r->nprocs, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, r->comm);
    if (first == r->nprocs) return 0;
    char buf[MPI_MAX_ERROR_STRING];
    if (r->rank == first) rma_errstr(r->err, buf, sizeof buf);
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, r->comm);
    snprintf(why, len, "%s", buf);
    return 1;
}

/* ------------------------------------------------------------- driver */

struct plan {
    struct mb_run *run;
    struct rma *r;
    struct rma_win *wins; /* one per flavour (selected ones created) */
    struct mb_sweep *sweeps, *sw; /* one per (op, kind, reference or window x sync); the current one */
};

static void describe(const struct mb_run *run, struct mb_row *row, const struct rma *r, const char *op, int kind,
                     const char *method, const char *comm)
{
    char test[32];
    snprintf(test, sizeof test, "%s-%s", op, kind_name[kind]);
    mb_row_init(row, test, method);
    snprintf(row->comm, sizeof row->comm, "%s", comm);
    row->threads = 1;
    row->bytes = (long long)r->bytes;
    row->sent_bytes = (double)r->nops * (double)r->bytes;
    mb_param_opt(run, row, "pairs");
    if (kind == 1) mb_param_opt(run, row, "epoch-ops");
}

static void reference(struct plan *p, int kind)
{
    struct rma *r = p->r;
    struct mb_row row;
    describe(p->run, &row, r, r->op->name, kind, "sendrecv", "p2p");
    mb_begin(p->run, &row);
    struct mb_kernel k = {.state = r, .comm = r->comm, .fill = rma_sendrecv_fill, .check = rma_sendrecv_check,
                          .idle = r->role == ROLE_IDLE, .sweep = p->sw};
    if (kind == 0)
        k.run_timed = rma_sendrecv_latency;
    else
        k.run = rma_sendrecv_bw;
    mb_measure(p->run, &k, &row);
    mb_end(p->run, &row);
}

static void rma_test(struct plan *p, int kind, const struct rma_win *w, const struct rma_sync *s)
{
    struct rma *r = p->r;
    struct mb_row row;
    char why[MPI_MAX_ERROR_STRING + 64];
    describe(p->run, &row, r, r->op->name, kind, s->name, w->wf->name);
    mb_begin(p->run, &row);
    r->w = *w;
    r->sync = s;
    const char *quirk = w->na[0] ? NULL : rma_quirk(r);
    if (w->na[0]) {
        mb_na(p->run, &row, "%s", w->na);
    } else if (quirk) {
        mb_na(p->run, &row, "%s", quirk);
    } else {
        r->err = 0;
        rma_prepare(r);
        rma_run_timed(r, 1); /* a probe epoch: an unsupported combination fails here, untimed */
        if (agree_error(r, why, sizeof why)) {
            mb_na(p->run, &row, "%s", why);
        } else {
            struct mb_kernel k = {
                .state = r, .comm = r->comm, .run_timed = rma_run_timed, .fill = rma_fill, .check = rma_check,
                .idle = r->role == ROLE_IDLE, .sweep = p->sw};
            mb_measure(p->run, &k, &row);
            if (agree_error(r, why, sizeof why)) mb_na(p->run, &row, "failed while timed: %s", why);
        }
        if (s->finish) s->finish(r);
    }
    mb_end(p->run, &row);
}

static int count_ops(void)
{
    int n = 0;
    while (rma_ops[n].name) n++;
    return n;
}

/* The plan: which sizes (mb_sizes), operations and synchronisations run.  The
 * sweep and its row count (the progress line's total) both read it. */
static int op_runs(int oi, size_t size, int first)
{
    const struct rma_op *op = &rma_ops[oi];
    return (sel_ops >> oi & 1) && (!op->fixed || first) && (op->fixed || size % op->elem == 0);
}

static int sync_runs(int wi, int si)
{
    return (sel_windows >> wi & 1) && (sel_syncs >> si & 1) && (!rma_syncs[si].shared_only || rma_windows[wi].shared);
}

static int plan_rows(const struct mb_opts *o, int nwins, int nsyncs)
{
    int per_kind = !no_reference, rows = 0, nops = count_ops(), ntests = (sel_tests & 1) + (sel_tests >> 1 & 1);
    for (int wi = 0; wi < nwins; wi++)
        for (int si = 0; si < nsyncs; si++) per_kind += sync_runs(wi, si);
    size_t sizes[MB_MAX_SIZES];
    const int nsizes = mb_sizes(o, sizes);
    for (int zi = 0; zi < nsizes; zi++)
        for (int oi = 0; oi < nops; oi++) rows += op_runs(oi, sizes[zi], zi == 0) * per_kind * ntests;
    return rows;
}

/* Sizes outermost (kept in order: calibration and the sweep budget follow
 * them); under --order shuffle the tests of each size in a random order. */
static void sweep(struct plan *p)
{
    struct rma *r = p->r;
    struct mb_run *run = p->run;
    const struct mb_opts *o = &run->opts;
    int nops = count_ops(), nwins = 0, nsyncs = 0;
    size_t sizes[MB_MAX_SIZES];
    const int nsizes = mb_sizes(o, sizes);
    while (rma_windows[nwins].name) nwins++;
    while (rma_syncs[nsyncs].name) nsyncs++;
    const int per = nwins * nsyncs + 1; /* sweeps of one (op, kind): the reference, then window x sync */
    for (int zi = 0; zi < nsizes; zi++) {
        const size_t size = sizes[zi];
        mb_order(run, 0, 64, zi, 1);
        for (int jo = 0; jo < nops; jo++) {
            const int oi = mb_order(run, 1, nops, jo, 0);
            const struct rma_op *op = &rma_ops[oi];
            if (!op_runs(oi, size, zi == 0)) continue;
            r->op = op;
            r->bytes = op->fixed ? op->elem : size;
            for (int jk = 0; jk < NKIND; jk++) {
                const int kind = mb_order(run, 2, NKIND, jk, 0);
                if (!(sel_tests >> kind & 1)) continue;
                r->nops = kind ? r->nslots : 1;
                struct mb_sweep *sw = p->sweeps && !op->fixed ? &p->sweeps[(oi * NKIND + kind) * per] : NULL;
                p->sw = sw;
                if (!no_reference) reference(p, kind);
                for (int jw = 0; jw < nwins; jw++) {
                    const int wi = mb_order(run, 3, nwins, jw, 0);
                    if (!(sel_windows >> wi & 1)) continue;
                    for (int js = 0; js < nsyncs; js++) {
                        const int si = mb_order(run, 4, nsyncs, js, 0);
                        p->sw = sw ? sw + 1 + wi * nsyncs + si : NULL;
                        if (sync_runs(wi, si)) rma_test(p, kind, &p->wins[wi], &rma_syncs[si]);
                    }
                }
            }
        }
    }
}

static void add_meta(struct mb_run *run, const struct rma *r, const struct rma_win *wins)
{
    char meta[2048], *m = meta;
    size_t left = sizeof meta;
    int n = snprintf(m, left, "{\"pairs\": \"%s\", \"target\": %d, \"origins\": [",
                     pairs_choice ? "many-to-one" : "one", r->target);
    for (int k = 0; k < r->norigins && n < (int)left; k++)
        n += snprintf(m + n, left - (size_t)n, "%s%d", k ? ", " : "", r->origins[k]);
    n += snprintf(m + n, left - (size_t)n, "], \"epoch_ops\": %d, \"windows\": {", r->nslots);
    int c = 0;
    for (int wi = 0; rma_windows[wi].name && n < (int)left; wi++) {
        if (!(sel_windows >> wi & 1)) continue;
        const char *model = wins[wi].na[0] ? "n/a" : "unknown";
#ifndef MB_SIMULATED /* SimGrid SMPI does not know MPI_WIN_MODEL */
        if (!wins[wi].na[0]) {
            int *val = NULL, flag = 0;
            MPI_Win_get_attr(wins[wi].win, MPI_WIN_MODEL, &val, &flag);
            if (flag && val) model = *val == MPI_WIN_UNIFIED ? "unified" : "separate";
        }
#endif
        n += snprintf(m + n, left - (size_t)n, "%s\"%s\": \"%s\"", c++ ? ", " : "", rma_windows[wi].name, model);
    }
    if (n < (int)left) snprintf(m + n, left - (size_t)n, "}}");
    mb_meta_add(run, "rma", meta);
}

int main(int argc, char **argv)
{
    collect_names();
    struct mb_run *run = mb_init(&argc, &argv, &program);
    int nops = 0, nsyncs = 0, nwins = 0;
    while (rma_ops[nops].name) nops++;
    while (rma_syncs[nsyncs].name) nsyncs++;
    while (rma_windows[nwins].name) nwins++;
    sel_ops = (sel_ops ? sel_ops : ~0ul) & ((1ul << nops) - 1);
    sel_syncs = (sel_syncs ? sel_syncs : ~0ul) & ((1ul << nsyncs) - 1);
    sel_windows = (sel_windows ? sel_windows : ~0ul) & ((1ul << nwins) - 1);
    sel_tests = (sel_tests ? sel_tests : ~0ul) & 3;
    size_t smax = run->opts.size_max < 8 ? 8 : run->opts.size_max;
    if (smax > (1ul << 30) / (size_t)epoch_ops)
        mb_usage_error(run, "--epoch-ops (%ld) x the largest size (%zu B) must be at most 1 GiB", epoch_ops, smax);
    if (run->nprocs < 2)
        mb_usage_error(run, "needs at least 2 processes (an origin and a target), got %d", run->nprocs);

    struct rma r = {.rank = run->rank, .nprocs = run->nprocs, .nslots = (int)epoch_ops};
    MPI_Comm_dup(MPI_COMM_WORLD, &r.comm);
    MPI_Comm_set_errhandler(r.comm, MPI_ERRORS_RETURN);
    r.region = (size_t)epoch_ops * smax;
    r.origins = malloc((size_t)r.nprocs * sizeof *r.origins);
    r.oidx = -1;
    if (pairs_choice == 0) {
        r.target = 1;
        r.norigins = 1;
        r.origins[0] = 0;
    } else {
        r.target = 0;
        r.norigins = r.nprocs - 1;
        for (int k = 0; k < r.norigins; k++) r.origins[k] = k + 1;
    }
    r.role = r.rank == r.target ? ROLE_TARGET : ROLE_IDLE;
    for (int k = 0; k < r.norigins; k++)
        if (r.origins[k] == r.rank) {
            r.role = ROLE_ORIGIN;
            r.oidx = k;
        }
    if (r.role == ROLE_ORIGIN) {
        r.src = mb_alloc(r.region);
        r.res = mb_alloc(r.region);
        r.cmp = mb_alloc(r.region);
    }
    if (r.role == ROLE_TARGET) r.p2p = mb_alloc((size_t)r.norigins * r.region);
    size_t nreq = (size_t)r.nslots * (size_t)r.norigins + (size_t)r.norigins + 1;
    r.reqs = malloc(nreq * sizeof *r.reqs);
    r.stats = malloc(nreq * sizeof *r.stats);

    struct rma_win wins[8] = {{0}};
    struct plan p = {.run = run, .r = &r, .wins = wins};
    run->ntotal = plan_rows(&run->opts, nwins, nsyncs);
    for (int wi = 0; wi < nwins; wi++) {
        if (!(sel_windows >> wi & 1)) continue;
        r.w = (struct rma_win){.wf = &rma_windows[wi]};
        char why[sizeof r.w.na];
        if (rma_windows[wi].create(&r, why, sizeof why))
            snprintf(r.w.na, sizeof r.w.na, "%s", why);
        wins[wi] = r.w;
    }
    p.sweeps = calloc((size_t)count_ops() * NKIND * (size_t)(nwins * nsyncs + 1), sizeof *p.sweeps);
    sweep(&p);
    free(p.sweeps);
    add_meta(run, &r, wins);
    for (int wi = 0; wi < nwins; wi++)
        if ((sel_windows >> wi & 1) && !wins[wi].na[0]) {
            r.w = wins[wi];
            rma_windows[wi].destroy(&r);
        }
    if (run->rank == 0) rma_report(run, &r, pairs_choice);
    free(r.src);
    free(r.res);
    free(r.cmp);
    free(r.p2p);
    free(r.reqs);
    free(r.stats);
    free(r.origins);
    MPI_Comm_free(&r.comm);
    return mb_finish(run);
}
