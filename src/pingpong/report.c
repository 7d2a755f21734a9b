/* The stdout tables, shaped like osu_latency / osu_bw: one block per test
 * and pair placement, a line per size with the value under the chosen
 * statistic and the 95 % CI of the median; all-pairs as rank x rank matrices
 * (or a summary over pairs when there are many ranks). */
#include "pingpong.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

static char *fmt(double v)
{
    char buf[32];
    mb_fmt_value(buf, sizeof buf, v);
    return strdup(buf);
}

static char *str(const char *s) { return strdup(s); }


/* What a block shows: microseconds per message, or MB/s of what one process
 * sends (the CSV's mbps, as mpimb-report shows it: bibw one direction,
 * msgrate one pair); msgrate adds the messages per second of all pairs. */
struct shape {
    const char *test, *title, *unit;
    int rate;     /* 1: bytes / time, 0: time in us */
    double pairs; /* msgrate: pairs sending at once */
};

static double value(const struct shape *sh, const struct mb_row *r, double t)
{
    if (isnan(t)) return NAN; /* no interval below 6 repetitions: shown as '-' */
    if (sh->rate && r->bytes == 0) return NAN; /* 0 bytes: no bandwidth (the CSV's mbps is empty) */
    if (!(t > 0)) return 0;
    return sh->rate ? (double)r->bytes / t / 1e6 : t * 1e6;
}

static void block(const struct mb_run *run, const struct shape *sh, const char *comm, const char *who)
{
    int n = 0;
    for (int i = 0; i < run->nrows; i++) n += !strcmp(run->rows[i].test, sh->test) && !strcmp(run->rows[i].comm, comm);
    if (!n) return;
    const int msgrate = !strcmp(sh->test, "msgrate"), ncols = msgrate ? 8 : 7;
    char **cells = calloc((size_t)(ncols * (n + 1)), sizeof *cells);
    const char *head[] = {"Size (B)", sh->unit, "CI low", "CI high", "\u00b1CI", "reps", "stop", "Messages/s"};
    for (int c = 0; c < ncols; c++) cells[c] = str(head[c]);
    int k = 1;
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (strcmp(r->test, sh->test) || strcmp(r->comm, comm)) continue;
        char **row = cells + k++ * ncols;
        char size[32], reps[32];
        snprintf(size, sizeof size, "%lld", r->bytes);
        row[0] = str(r->bytes >= 0 ? size : "-");
        if (r->na) {
            row[1] = str("n/a");
            row[6] = str(r->stop_reason + (strncmp(r->stop_reason, "n/a: ", 5) ? 0 : 5));
            continue;
        }
        double lo = value(sh, r, sh->rate ? r->t.ci_hi : r->t.ci_lo), hi = value(sh, r, sh->rate ? r->t.ci_lo : r->t.ci_hi);
        row[1] = fmt(value(sh, r, mb_stat_value(&run->opts, &r->t)));
        row[2] = fmt(lo);
        row[3] = fmt(hi);
        row[4] = mb_ci_cell(r);
        snprintf(reps, sizeof reps, "%ld", r->reps);
        row[5] = str(reps);
        row[6] = str(r->stop_reason);
        if (msgrate) row[7] = fmt(sh->pairs / mb_stat_value(&run->opts, &r->t));
    }
    printf("\n# %s, %s [%s]\n", sh->title, who, comm);
    mb_table_emit(stdout, n + 1, ncols, cells, NULL);
}

static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method)
{
    for (int i = 0; i < run->nrows; i++)
        if (!strcmp(run->rows[i].test, test) && !strcmp(run->rows[i].method, method)) return &run->rows[i];
    return NULL;
}

static void matrix(const struct mb_run *run, const struct shape *sh)
{
    const int P = run->nprocs;
    const struct mb_row *any = NULL;
    for (int i = 0; i < run->nrows && !any; i++)
        if (!strcmp(run->rows[i].test, sh->test)) any = &run->rows[i];
    if (!any) return;
    printf("\n# %s, %lld bytes: %s, row rank to column rank, one pair at a time\n", sh->title, any->bytes, sh->unit);
    char **cells = calloc((size_t)((P + 1) * (P + 1)), sizeof *cells);
    cells[0] = str("rank");
    for (int a = 0; a < P; a++) {
        char num[16];
        snprintf(num, sizeof num, "%d", a);
        cells[1 + a] = str(num);
        cells[(1 + a) * (P + 1)] = str(num);
        for (int b = 0; b < P; b++) {
            char method[48];
            snprintf(method, sizeof method, "%d-%d", a < b ? a : b, a < b ? b : a);
            const struct mb_row *r = a == b ? NULL : find(run, sh->test, method);
            char **cell = &cells[(1 + a) * (P + 1) + 1 + b];
            *cell = !r ? str("-") : r->na ? str("n/a") : fmt(value(sh, r, mb_stat_value(&run->opts, &r->t)));
        }
    }
    mb_table_emit(stdout, P + 1, P + 1, cells, NULL);
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Many ranks: min / median / max over the pairs of each placement. */
static void summary(const struct mb_run *run, const struct shape *sh)
{
    char **cells = calloc(3 * 5, sizeof *cells);
    const char *head[] = {"pairs", "count", "min", "median", "max"};
    for (int c = 0; c < 5; c++) cells[c] = str(head[c]);
    int n = 1;
    double *v = malloc((size_t)run->nrows * sizeof *v);
    for (int w = 0; w < 2; w++) {
        const char *where = w ? "inter" : "intra";
        int m = 0;
        for (int i = 0; i < run->nrows; i++) {
            const struct mb_row *r = &run->rows[i];
            if (!strcmp(r->test, sh->test) && !strcmp(r->comm, where) && !r->na)
                v[m++] = value(sh, r, mb_stat_value(&run->opts, &r->t));
        }
        if (!m) continue;
        qsort(v, (size_t)m, sizeof *v, cmp);
        char count[16];
        snprintf(count, sizeof count, "%d", m);
        char **row = cells + 5 * n++;
        row[0] = str(where);
        row[1] = str(count);
        row[2] = fmt(v[0]);
        row[3] = fmt(m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]));
        row[4] = fmt(v[m - 1]);
    }
    free(v);
    if (n > 1) {
        printf("\n# %s over all pairs: %s (matrix in the CSV)\n", sh->title, sh->unit);
        mb_table_emit(stdout, n, 5, cells, NULL);
    } else {
        for (int i = 0; i < 15; i++) free(cells[i]);
        free(cells);
    }
}

void pp_report(const struct mb_run *run, const struct pp_place *pl, long window, int cold)
{
    printf("pingpong: %d processes on %d node(s), label %s, %s buffers; statistic: %s, CI: 95%% CI of the median\n",
           run->nprocs, run->nnodes, run->label, cold ? "cold (rotating)" : "warm", mb_stat_name(run->opts.stat));
    mb_print_caveats(stdout, run);
    const int npairs = run->nprocs / 2;
    const struct shape shapes[] = {
        {"latency", "Latency (one-way = half round trip)", "Latency (us)", 0, 1},
        {"pingping", "Ping-ping (both send at once, time per message)", "Time (us)", 0, 1},
        {"bw", "Bandwidth (osu_bw)", "Bandwidth (MB/s)", 1, 1},
        {"bibw", "Bidirectional bandwidth (osu_bibw), MB/s of one direction", "Bandwidth (MB/s)", 1, 1},
        {"msgrate", "Message rate (osu_mbw_mr), all pairs together: MB/s of one pair, Messages/s of all", "MB/s", 1,
         npairs},
    };
    char who[2][48];
    const int *pair[2] = {pl->intra, pl->inter};
    for (int w = 0; w < 2; w++)
        if (pair[w][0] >= 0)
            snprintf(who[w], sizeof who[w], "ranks %d and %d", pair[w][0], pair[w][1]);
        else
            snprintf(who[w], sizeof who[w], "no such pair");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        if (s == 4) {
            char desc[200];
            snprintf(desc, sizeof desc, "%d pair(s) i <-> i+%d%s, window %ld", npairs, npairs,
                     run->nprocs % 2 ? ", the last rank idle (odd count)" : "", window);
            block(run, &shapes[s], "intra", desc);
            block(run, &shapes[s], "inter", desc);
            block(run, &shapes[s], "mixed", desc);
            continue;
        }
        for (int w = 0; w < 2; w++) {
            char desc[200];
            if (s == 2 || s == 3)
                snprintf(desc, sizeof desc, "%s, window %ld", who[w], window);
            else
                snprintf(desc, sizeof desc, "%s", who[w]);
            block(run, &shapes[s], w ? "inter" : "intra", desc);
        }
    }
    const struct shape ap[] = {
        {"allpairs-latency", "All-pairs latency", "latency (us)", 0, 1},
        {"allpairs-bw", "All-pairs bandwidth", "bandwidth (MB/s)", 1, 1},
    };
    for (int i = 0; i < 2; i++) {
        if (run->nprocs <= 16)
            matrix(run, &ap[i]);
        else
            summary(run, &ap[i]);
    }
    if (run->nprocs > 2)
        printf("\nRanks outside the pair(s) being measured wait in the harness's barrier (idle).\n");
    printf("MB/s = 10^6 bytes per second; times are the slowest rank's; n/a = not available (reason in the CSV).\n");
    fflush(stdout);
}
