/* The stdout tables (rank 0): one per library collective (size x the run's
 * ranks, blocking and nonblocking side by side), the broadcast comparison
 * with the fastest algorithm marked, and the series test. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

struct col {
    const char *test, *method, *label;
    double divisor; /* the series' per-message figure: total / m */
    int compare;    /* the fastest of the compare columns gets a '*' */
};

static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method, long long bytes)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->bytes == bytes && !strcmp(r->test, test) && !strcmp(r->method, method)) return r;
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

/* Prints one table: rows = message sizes any column has, cells = µs.
 * Returns 0 (and prints nothing) when no column has a row. */
static int table(const struct mb_run *run, const char *title, const char *group, const struct col *cols, int nc)
{
    long long sizes[64];
    int ns = 0;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        int mine = 0;
        for (int c = 0; c < nc && !mine; c++) mine = !strcmp(r->test, cols[c].test) && !strcmp(r->method, cols[c].method);
        if (!mine) continue;
        int seen = 0;
        for (int k = 0; k < ns && !seen; k++) seen = sizes[k] == r->bytes;
        if (!seen && ns < 64) sizes[ns++] = r->bytes;
    }
    if (!ns) return 0;
    /* sizes in increasing order (rows were run test by test) */
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && sizes[j] < sizes[j - 1]; j--) {
            long long t = sizes[j];
            sizes[j] = sizes[j - 1];
            sizes[j - 1] = t;
        }
    int ncols = nc + 1, nrows = ns + 1;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    const char **groups = calloc((size_t)ncols, sizeof *groups);
    groups[1] = group;
    cells[0] = strdup("bytes");
    for (int c = 0; c < nc; c++) cells[1 + c] = strdup(cols[c].label);
    for (int s = 0; s < ns; s++) {
        char buf[48];
        fmt_size(buf, sizeof buf, sizes[s]);
        cells[(1 + s) * ncols] = strdup(buf);
        int best = -1;
        double bestv = 0;
        for (int c = 0; c < nc; c++) {
            const struct mb_row *r = find(run, cols[c].test, cols[c].method, sizes[s]);
            if (!cols[c].compare || !r || r->na) continue;
            double v = mb_stat_value(&run->opts, &r->t);
            if (best < 0 || v < bestv) best = c, bestv = v;
        }
        for (int c = 0; c < nc; c++) {
            const struct mb_row *r = find(run, cols[c].test, cols[c].method, sizes[s]);
            if (!r)
                snprintf(buf, sizeof buf, "-");
            else if (r->na)
                snprintf(buf, sizeof buf, "n/a");
            else {
                mb_fmt_value(buf, sizeof buf - 2, mb_stat_value(&run->opts, &r->t) * 1e6 / cols[c].divisor);
                if (c == best) strcat(buf, " *");
            }
            cells[(1 + s) * ncols + 1 + c] = strdup(buf);
        }
    }
    printf("\n%s\n", title);
    mb_table_emit(stdout, nrows, ncols, cells, groups);
    free(groups);
    return 1;
}

void coll_report(const struct mb_run *run, const struct coll_report *info)
{
    const char *stat = mb_stat_name(run->opts.stat);
    char group[64], title[256];
    snprintf(group, sizeof group, "%d ranks", run->nprocs);
    printf("collectives: %d processes on %d node(s), label %s; root %s, timing %s\n", run->nprocs, run->nnodes,
           run->label, info->root, info->timing);

    for (int i = 0; coll_library[i].test; i++) {
        const char *t = coll_library[i].test;
        char nb[40];
        snprintf(nb, sizeof nb, "i%s", t);
        struct col cols[2] = {{t, "library", t, 1, 0}, {nb, "library", nb, 1, 0}};
        snprintf(title, sizeof title, "%s: time per call in us (%s)%s", t, stat,
                 coll_library[i].flags & COLL_DOUBLES ? ", MPI_DOUBLE sum, bytes = 8 x count" : "");
        table(run, title, group, cols, 2);
    }

    struct col bc[] = {{"bcast", "library", "MPI_Bcast", 1, 1},
                       {"bcast", "binomial", "binomial", 1, 1},
                       {"bcast", "chain", "chain", 1, 1},
                       {"bcast", "scatter-allgather", "scatter-allgather", 1, 1}};
    snprintf(title, sizeof title, "Broadcast algorithms: time per call in us (%s), * = fastest; chain segment %zu B",
             stat, info->segment);
    table(run, title, group, bc, 4);

    double m = (double)info->messages;
    struct col sc[] = {{"series", "bcast-loop", "bcast-loop total", 1, 1},
                       {"series", "bcast-loop", "per message", m, 0},
                       {"series", "chain", "chain total", 1, 1},
                       {"series", "chain", "per message", m, 0}};
    snprintf(title, sizeof title, "Series: %ld successive broadcasts of `bytes` each, time in us (%s), * = faster",
             info->messages, stat);
    table(run, title, group, sc, 4);

    printf("\nTime = the slowest rank's; n/a = not available here (reason in the CSV); - = not run.\n");
    fflush(stdout);
}
