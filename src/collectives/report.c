/* The stdout tables (rank 0): one per library collective (its blocking,
 * nonblocking and two-level forms and its aggregate bandwidth), the
 * broadcast algorithms with the fastest marked, and the series test.  The
 * communicators of --comms are column groups side by side; each root of
 * --root has its own table of the rooted operations. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

struct col {
    const char *test, *method, *label;
    double divisor; /* the series' per-message figure: total / m */
    int compare;    /* the fastest of the compare columns gets a '*' */
    int agg;        /* the aggregate bandwidth (MB/s), not the time */
};

/* The row of a column in a communicator at a size; root NULL: any. */
static const struct mb_row *find(const struct mb_run *run, const struct col *c, const char *comm, const char *root,
                                 long long bytes)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->bytes == bytes && !r->overlap && !strcmp(r->test, c->test) && !strcmp(r->method, c->method) &&
            !strcmp(r->comm, comm) && (!root || mb_param_is(r->params, "root", root)))
            return r;
    }
    return NULL;
}

static void fmt_size(char *buf, size_t len, long long b)
{
    if (b < 0)
        snprintf(buf, len, "-");
    else if (b >= 1 << 20 && b % (1 << 20) == 0)
        snprintf(buf, len, "%lldM", b >> 20);
    else if (b >= 1 << 10 && b % (1 << 10) == 0)
        snprintf(buf, len, "%lldK", b >> 10);
    else
        snprintf(buf, len, "%lld", b);
}

struct shown { /* a column of the printed table */
    const struct col *col;
    const struct coll_comm *comm;
};

/* Prints one table: rows = the message sizes, a column group per
 * communicator holding the columns that have rows there; cells in µs (agg:
 * MB/s).  Prints nothing when no column has a row. */
static void table(const struct mb_run *run, const struct coll_report *info, const char *title, const char *root,
                  const struct col *cols, int nc)
{
    long long sizes[64];
    int ns = 0, nshown = 0;
    struct shown *sh = calloc((size_t)(nc * info->ncomms), sizeof *sh);
    for (int g = 0; g < info->ncomms; g++)
        for (int c = 0; c < nc; c++) {
            int any = 0;
            for (int i = 0; i < run->nrows; i++) {
                const struct mb_row *r = &run->rows[i];
                if (find(run, &cols[c], info->comms[g].name, root, r->bytes) != r) continue;
                any = 1;
                int seen = 0;
                for (int k = 0; k < ns && !seen; k++) seen = sizes[k] == r->bytes;
                if (!seen && ns < 64) sizes[ns++] = r->bytes;
            }
            if (any) sh[nshown++] = (struct shown){&cols[c], &info->comms[g]};
        }
    if (!nshown) {
        free(sh);
        return;
    }
    for (int i = 1; i < ns; i++) /* sizes in increasing order */
        for (int j = i; j > 0 && sizes[j] < sizes[j - 1]; j--) {
            long long t = sizes[j];
            sizes[j] = sizes[j - 1];
            sizes[j - 1] = t;
        }
    int ncols = nshown + 1, nrows = ns + 1;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    const char **groups = calloc((size_t)ncols, sizeof *groups);
    cells[0] = strdup("bytes");
    for (int c = 0; c < nshown; c++) {
        cells[1 + c] = strdup(sh[c].col->label);
        if (!c || sh[c].comm != sh[c - 1].comm) groups[1 + c] = sh[c].comm->label;
    }
    for (int s = 0; s < ns; s++) {
        char buf[48];
        fmt_size(buf, sizeof buf, sizes[s]);
        cells[(1 + s) * ncols] = strdup(buf);
        const struct mb_row *row[64] = {0};
        for (int c = 0; c < nshown && c < 64; c++) row[c] = find(run, sh[c].col, sh[c].comm->name, root, sizes[s]);
        for (int c = 0; c < nshown && c < 64; c++) {
            const struct mb_row *r = row[c];
            int best = r && !r->na && sh[c].col->compare;
            for (int o = 0; o < nshown && best; o++) /* the fastest of its communicator's compare columns */
                if (o != c && row[o] && !row[o]->na && sh[o].col->compare && sh[o].comm == sh[c].comm &&
                    (mb_stat_value(&run->opts, &row[o]->t) < mb_stat_value(&run->opts, &r->t) ||
                     (o < c && mb_stat_value(&run->opts, &row[o]->t) == mb_stat_value(&run->opts, &r->t))))
                    best = 0;
            double v = sh[c].col->agg ? (r ? r->agg_mbps : 0)
                                      : (r ? mb_stat_value(&run->opts, &r->t) * 1e6 / sh[c].col->divisor : 0);
            char *cell = mb_cell(r, v);
            if (sh[c].col->agg && r && !r->na && !(r->agg_mbps > 0)) snprintf(cell, strlen(cell) + 1, "-");
            if (best) {
                cell = realloc(cell, strlen(cell) + 3);
                strcat(cell, " *");
            }
            cells[(1 + s) * ncols + 1 + c] = cell;
        }
    }
    printf("\n%s\n", title);
    mb_table_emit(stdout, nrows, ncols, cells, groups);
    free(groups);
    free(sh);
}

/* A table per root for rooted tests (one when there is one root). */
static void rooted_tables(const struct mb_run *run, const struct coll_report *info, int rooted, const char *title,
                          const struct col *cols, int nc)
{
    char t[320];
    if (!rooted || info->nroots == 1) {
        table(run, info, title, rooted ? info->roots[0] : NULL, cols, nc);
        return;
    }
    for (int i = 0; i < info->nroots; i++) {
        snprintf(t, sizeof t, "%s; root %s", title, info->rootname[i]);
        table(run, info, t, info->roots[i], cols, nc);
    }
}

void coll_report(const struct mb_run *run, const struct coll_report *info)
{
    const char *stat = mb_stat_name(run->opts.stat);
    char title[256];
    printf("collectives: %d processes on %d node(s), label %s; root %s, timing %s\n", run->nprocs, run->nnodes,
           run->label, info->root, info->timing);
    mb_print_caveats(stdout, run);

    for (int i = 0; coll_library[i].test; i++) {
        const char *t = coll_library[i].test;
        char nb[40];
        snprintf(nb, sizeof nb, "i%s", t);
        struct col cols[] = {{t, "library", t, 1, 0, 0},           {nb, "library", nb, 1, 0, 0},
                             {t, "persistent", "persistent", 1, 0, 0},
                             {t, "2level", "2level", 1, 0, 0},     {t, "2level-shm", "2level-shm", 1, 0, 0},
                             {t, "library", "agg MB/s", 1, 0, 1}};
        int agg = coll_library[i].agg != AGG_NONE;
        snprintf(title, sizeof title, "%s: time per call in us (%s)%s%s%s%s", t, stat,
                 coll_library[i].flags & COLL_DOUBLES ? ", MPI_DOUBLE sum, bytes = 8 x count" : "",
                 agg ? "; agg MB/s = bytes " : "", agg ? t : "", agg ? " moves / time" : "");
        rooted_tables(run, info, coll_library[i].flags & COLL_ROOTED, title, cols, agg ? 6 : 5);
    }

    struct col bc[] = {{"bcast", "library", "MPI_Bcast", 1, 1, 0},
                       {"bcast", "binomial", "binomial", 1, 1, 0},
                       {"bcast", "chain", "chain", 1, 1, 0},
                       {"bcast", "tree-pipelined", "tree-pipelined", 1, 1, 0},
                       {"bcast", "scatter-allgather", "scatter-allgather", 1, 1, 0}};
    snprintf(title, sizeof title,
             "Broadcast algorithms: time per call in us (%s), * = fastest; chain and tree segment %zu B", stat,
             info->segment);
    rooted_tables(run, info, 1, title, bc, 5);

    double m = (double)info->messages;
    struct col sc[] = {{"series", "bcast-loop", "bcast-loop total", 1, 1, 0},
                       {"series", "bcast-loop", "per message", m, 0, 0},
                       {"series", "chain", "chain total", 1, 1, 0},
                       {"series", "chain", "per message", m, 0, 0}};
    snprintf(title, sizeof title, "Series: %ld successive broadcasts of `bytes` each, time in us (%s), * = faster",
             info->messages, stat);
    rooted_tables(run, info, 1, title, sc, 4);

    printf("\nTime = the slowest rank's; n/a = not available here (reason in the CSV); - = not run; "
           "FAILED = verification failed.\n");
    fflush(stdout);
}
