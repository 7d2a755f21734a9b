/* collectives --algorithms: the library's own algorithms of bcast, reduce,
 * allreduce, allgather, alltoall and barrier, as the library lists them
 * (mpit.c), each forced in turn and measured with verification.  For one
 * (collective, size, communicator) every algorithm is a member of one group
 * (mb_measure_group: interleaved rounds, so every algorithm is compared
 * with the library's own choice — value 0, "auto" / "ignore" — round by
 * round), each row saying its algorithm in params (algorithm=NAME).  An
 * algorithm the library refuses for this size or communicator is its n/a
 * row with the library's error string.  The rows are what `mpimb-report
 * tune` turns into the library's tuning file (docs/collectives.md). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

static const char *const COLLS[] = {"bcast", "reduce", "allreduce", "allgather", "alltoall", "barrier"};
enum { NCOLLS = sizeof COLLS / sizeof COLLS[0] };

static struct coll_algs algs[NCOLLS];
static const char *why_none[NCOLLS];
static int selected[NCOLLS];
static unsigned long alg_mask[NCOLLS]; /* the algorithms measured: bit i = algs[c].names[i] */

static const struct coll_op *library_op(const char *test)
{
    for (int i = 0; coll_library[i].test; i++)
        if (!strcmp(coll_library[i].test, test)) return &coll_library[i];
    return NULL;
}

/* Whether name is one of the words of the comma-separated list arg. */
static int listed(const char *arg, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = arg; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

void coll_lib_algorithms_check(struct mb_run *run, const char *arg, unsigned long tests_mask,
                               unsigned long (*bit)(const char *))
{
    int all = !strcmp(arg, "library"), any = 0;
    for (int c = 0; c < NCOLLS; c++) {
        selected[c] = (tests_mask & bit(COLLS[c])) != 0;
        if (!selected[c]) continue;
        any = 1;
        why_none[c] = coll_algs_find(COLLS[c], &algs[c]);
        if (why_none[c]) continue;
        alg_mask[c] = 1; /* the library's own choice, always: the reference of every other */
        for (int i = 1; i < algs[c].n; i++)
            if (all || listed(arg, algs[c].names[i])) alg_mask[c] |= 1ul << i;
    }
    if (!any) mb_usage_error(run, "--algorithms needs one of --tests bcast,reduce,allreduce,allgather,alltoall,barrier");
    if (all) return;
    for (const char *p = arg; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        const char *e = strchr(p, ',');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
        int found = 0;
        for (int c = 0; c < NCOLLS && !found; c++)
            found = selected[c] && !why_none[c] && coll_algs_lookup(&algs[c], name) >= 0;
        if (!found)
            mb_usage_error(run, "--algorithms: %s has no algorithm '%s' for the selected collectives (--algorithms library "
                           "measures every one it lists)",
                           *coll_algs_library() ? coll_algs_library() : "this MPI library", name);
    }
}

/* ------------------------------------------------------------ one group */

struct member {
    struct coll_state s;
    struct coll_kern k;
    int dup; /* s.comm is this member's own duplicate */
};

/* The row of algorithm i of collective c at b bytes on cc. */
static void describe(struct mb_run *run, struct mb_row *row, int c, int i, size_t b, const struct coll_comm *cc,
                     const char *root_param)
{
    const struct coll_op *op = library_op(COLLS[c]);
    run->order_path[3] = i;
    mb_row_init(row, COLLS[c], "library");
    snprintf(row->comm, sizeof row->comm, "%s", cc->name);
    mb_param_opt(run, row, "timing");
    mb_param(row, "algorithm", "%s", algs[c].names[i]);
    if (*coll_tuning_name) mb_param(row, "tuning", "%s", coll_tuning_name);
    if (op->flags & COLL_ROOTED) mb_param(row, "root", "%s", root_param);
    if (!(op->flags & COLL_NOSIZE)) {
        row->bytes = (long long)b;
        row->sent_bytes = (double)b;
    }
    memcpy(row->order, run->order_path, sizeof row->order);
}

/* Open MPI: a communicator takes the forced algorithm when it is created, so the member gets its own
 * duplicate of cc made with it; NULL, or why it could not be forced. */
static const char *own_comm(struct member *x, const struct coll_algs *a, int i, const struct coll_comm *cc)
{
    static char err[160];
    if (!coll_algs_at_creation()) return NULL;
    int rc = coll_algs_set(a, a->values[i]);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(cc->comm, &x->s.comm);
    coll_algs_set(a, a->initial);
    if (rc != MPI_SUCCESS) {
        snprintf(err, sizeof err, "%s=%d could not be set through MPI_T", a->var, a->values[i]);
        return err;
    }
    x->dup = 1;
    MPI_Comm_set_errhandler(x->s.comm, MPI_ERRORS_RETURN);
    return NULL;
}

/* Algorithm i of collective c made ready to measure (coll_prepare, the algorithm forced for the probe
 * call); NULL, or why it is n/a. */
static const char *prepare(const struct mb_run *run, struct member *x, int c, int i, size_t b,
                           const struct coll_comm *cc, int root_rank)
{
    const struct coll_algs *a = &algs[c];
    *x = (struct member){.s = {.comm = cc->comm, .nodes = &cc->nodes, .local_of = cc->local_of, .segment = 8192,
                               .messages = 1, .root_mode = 0, .fixed_root = root_rank}};
    const char *earlier = own_comm(x, a, i, cc);
    MPI_Comm_rank(x->s.comm, &x->s.rank);
    MPI_Comm_size(x->s.comm, &x->s.size);
    x->k = (struct coll_kern){&x->s, library_op(COLLS[c]), 0, a, a->values[i]};
    return coll_prepare(run, &x->k, b, root_rank, earlier);
}

static void release(struct member *x)
{
    coll_teardown(&x->s, x->k.op);
    if (x->dup) MPI_Comm_free(&x->s.comm);
    x->dup = 0;
}

/* The selected algorithms of collective c at b bytes on cc, one group; an algorithm that cannot run here
 * is its n/a row. */
static void run_group(struct mb_run *run, int c, size_t b, const struct coll_comm *cc, const char *root_param,
                      int root_rank, struct mb_sweep *sw)
{
    const struct coll_algs *a = &algs[c];
    struct member *m = calloc(COLL_ALGS_MAX, sizeof *m);
    struct mb_row *rows = calloc(COLL_ALGS_MAX, sizeof *rows);
    struct mb_kernel *k = calloc(COLL_ALGS_MAX, sizeof *k);
    int n = 0;
    for (int i = 0; i < a->n; i++) {
        if (!(alg_mask[c] >> i & 1)) continue;
        describe(run, &rows[n], c, i, b, cc, root_param);
        mb_begin(run, &rows[n]);
        const char *why = prepare(run, &m[n], c, i, b, cc, root_rank);
        if (why) {
            mb_na(run, &rows[n], "%s", why);
            mb_end(run, &rows[n]);
            release(&m[n]);
            continue;
        }
        k[n] = coll_kernel(&m[n].k, run->world, &sw[i]);
        k[n].run_timed = coll_osu_timed;
        n++;
    }
    if (n) mb_measure_group(run, k, rows, n);
    for (int j = 0; j < n; j++) mb_end(run, &rows[j]);
    if (!coll_algs_at_creation()) coll_algs_set(a, a->initial);
    for (int j = 0; j < n; j++) release(&m[j]);
    free(m);
    free(rows);
    free(k);
}

/* ------------------------------------------------------------ stdout and the metadata */

/* Per collective and communicator: sizes down, the algorithms across, the fastest marked. */
static void report(const struct mb_run *run, const struct coll_comm *comms, int ncomms)
{
    printf("collectives --algorithms: the library's own algorithms (%s, set through MPI_T: %s), %d processes; "
           "time per call in us (%s), * = fastest\n", coll_algs_library(),
           coll_algs_at_creation() ? "a communicator created after each write" : "written before the calls",
           run->nprocs, mb_stat_name(run->opts.stat));
    mb_print_caveats(stdout, run);
    for (int c = 0; c < NCOLLS; c++) {
        if (!selected[c]) continue;
        if (why_none[c]) {
            printf("\n%s: n/a (%s)\n", COLLS[c], why_none[c]);
            continue;
        }
        const struct coll_algs *a = &algs[c];
        for (int g = 0; g < ncomms; g++) {
            const char *head[COLL_ALGS_MAX + 1] = {"bytes"};
            int idx[COLL_ALGS_MAX], nc = 0;
            for (int i = 0; i < a->n; i++)
                if (alg_mask[c] >> i & 1) {
                    idx[nc] = i;
                    head[++nc] = a->names[i];
                }
            struct mb_table t;
            mb_table_new(&t, nc + 1, head);
            long long last = -2;
            for (int r0 = 0; r0 < run->nrows; r0++) { /* rows come size by size: one table row per size */
                const struct mb_row *r = &run->rows[r0];
                if (strcmp(r->test, COLLS[c]) || strcmp(r->comm, comms[g].name) || r->bytes == last) continue;
                last = r->bytes;
                char **cells = mb_table_row(&t), buf[32];
                if (r->bytes < 0)
                    snprintf(buf, sizeof buf, "-");
                else
                    snprintf(buf, sizeof buf, "%lld", r->bytes);
                cells[0] = strdup(buf);
                const struct mb_row *best = NULL;
                const struct mb_row *of[COLL_ALGS_MAX] = {0};
                for (int j = 0; j < nc; j++)
                    for (int q = r0; q < run->nrows; q++) {
                        const struct mb_row *o = &run->rows[q];
                        if (o->bytes == r->bytes && !strcmp(o->test, r->test) && !strcmp(o->comm, r->comm) &&
                            mb_param_is(o->params, "algorithm", a->names[idx[j]])) {
                            of[j] = o;
                            if (!o->na && (!best || mb_stat_value(&run->opts, &o->t) <
                                                        mb_stat_value(&run->opts, &best->t)))
                                best = o;
                            break;
                        }
                    }
                for (int j = 0; j < nc; j++) {
                    char *cell = mb_cell(of[j], of[j] ? mb_stat_value(&run->opts, &of[j]->t) * 1e6 : 0);
                    if (of[j] && of[j] == best) {
                        cell = realloc(cell, strlen(cell) + 3);
                        strcat(cell, " *");
                    }
                    cells[1 + j] = cell;
                }
            }
            char title[256];
            snprintf(title, sizeof title, "%s (%s; %s): algorithm %s = the library's own choice", COLLS[c],
                     a->var, comms[g].label, a->names[0]);
            mb_table_done(stdout, &t, title, NULL);
        }
    }
    printf("\nn/a = the library refused the algorithm here (its reason in the CSV); FAILED = verification "
           "failed.  `mpimb-report tune CSV` writes the library's tuning file from these rows.\n");
    fflush(stdout);
}

static void meta(struct mb_run *run)
{
    size_t cap = 16384, len = 0;
    char *m = malloc(cap);
    len += (size_t)snprintf(m + len, cap - len, "{\"library\": \"%s\", \"applied\": \"%s\", \"collectives\": {",
                            coll_algs_library(), coll_algs_at_creation() ? "communicator creation" : "call");
    int first = 1;
    for (int c = 0; c < NCOLLS; c++) {
        if (!selected[c] || why_none[c]) continue;
        const struct coll_algs *a = &algs[c];
        len += (size_t)snprintf(m + len, cap - len, "%s\"%s\": {\"variable\": \"%s\", \"default\": \"%s\", "
                                "\"at_start\": %d, \"algorithms\": {", first ? "" : ", ", a->coll, a->var, a->names[0],
                                a->initial);
        for (int i = 0; i < a->n && len < cap - 128; i++)
            len += (size_t)snprintf(m + len, cap - len, "%s\"%s\": %d", i ? ", " : "", a->names[i], a->values[i]);
        len += (size_t)snprintf(m + len, cap - len, "}}");
        first = 0;
    }
    len += (size_t)snprintf(m + len, cap - len, "}");
    char *sel = run->rank == 0 ? coll_algs_default_selection() : NULL;
    if (sel) { /* MPICH's own selection, which a tuning file must reproduce where it changes nothing */
        m = realloc(m, len + strlen(sel) + 64);
        len += (size_t)sprintf(m + len, ", \"default_selection\": %s", sel);
        free(sel);
    }
    strcpy(m + len, "}");
    mb_meta_add(run, "library_algorithms", m);
    free(m);
}

/* The rows over the plan's sizes and communicators: per selected collective and size it has, its
 * algorithms (or the one n/a row saying why there are none).  The progress line's total. */
static int plan_rows(const struct coll_plan *pl)
{
    int n = 0;
    for (int c = 0; c < NCOLLS; c++)
        for (int j = 0; j < pl->nsizes && selected[c]; j++)
            n += coll_applies(library_op(COLLS[c]), pl->sizes[j], pl->sizes[0]) *
                 (why_none[c] ? 1 : __builtin_popcountl(alg_mask[c])) * pl->ncomms;
    return n;
}

/* Collective c's one n/a row at b bytes on cc: why the library's algorithms cannot be measured. */
static void none_row(struct mb_run *run, int c, size_t b, const struct coll_comm *cc)
{
    struct mb_row row;
    mb_row_init(&row, COLLS[c], "library");
    snprintf(row.comm, sizeof row.comm, "%s", cc->name);
    mb_param_opt(run, &row, "timing");
    if (!(library_op(COLLS[c])->flags & COLL_NOSIZE)) row.bytes = (long long)b;
    mb_begin(run, &row);
    mb_na(run, &row, "--algorithms: %s", why_none[c]);
    mb_end(run, &row);
}

void coll_lib_algorithms(struct mb_run *run, const struct coll_plan *pl, const char *root_param, int root_rank)
{
    run->ntotal = plan_rows(pl);
    for (int jc = 0; jc < NCOLLS; jc++) {
        const int c = mb_order(run, 0, NCOLLS, jc, 0);
        if (!selected[c]) continue;
        struct mb_sweep sw[4][COLL_ALGS_MAX];
        memset(sw, 0, sizeof sw);
        for (int jb = 0; jb < pl->nsizes; jb++) {
            mb_order(run, 1, pl->nsizes, jb, 1);
            size_t b = pl->sizes[jb];
            if (!coll_applies(library_op(COLLS[c]), b, pl->sizes[0])) continue;
            for (int jg = 0; jg < pl->ncomms; jg++) {
                const int g = mb_order(run, 2, pl->ncomms, jg, 0);
                if (why_none[c])
                    none_row(run, c, b, &pl->comms[g]);
                else
                    run_group(run, c, b, &pl->comms[g], root_param, root_rank, sw[g]);
            }
        }
    }
    meta(run);
    if (run->rank == 0) report(run, pl->comms, pl->ncomms);
    for (int c = 0; c < NCOLLS; c++) coll_algs_free(&algs[c]);
    coll_algs_end();
}
