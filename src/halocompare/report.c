/* The tables on stdout.  One message size: the talk's shape — rows =
 * communicators, column groups = the stencils (4 and 8 neighbours in 2-D),
 * columns = methods, cells = MB/s per process; one block per periodicity,
 * then the one-sender rates beside the halo rate.  A size sweep (-m): one
 * compact table per periodicity, stencil and communicator — rows = bytes per
 * message, columns = methods (and one-sender on world). */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

/* bytes < 0: any size */
static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method, const char *comm,
                                 int nnbr, int periodic, long long bytes)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->neighbors == nnbr && r->periodic == periodic && (bytes < 0 || r->bytes == bytes) && !r->overlap &&
            !strcmp(r->test, test) && !strcmp(r->method, method) && !strcmp(r->comm, comm))
            return r;
    }
    return NULL;
}

/* MB/s under the chosen statistic (mbps in the CSV is always the median's). */
static double rate(const struct mb_run *run, const struct mb_row *r)
{
    double t = mb_stat_value(&run->opts, &r->t);
    return t > 0 ? r->sent_bytes / t / 1e6 : 0;
}

void halo_cell(char **c, const struct mb_run *run, const struct mb_row *r)
{
    if (r && !r->na && r->sent_bytes == 0) r = NULL; /* no neighbours to send to */
    *c = mb_cell(r, r && !r->na ? rate(run, r) : 0);
}

int halo_method_in(const struct halo_method *table, const char *name)
{
    for (const struct halo_method *m = table; m->name; m++)
        if (!strcmp(m->name, name)) return 1;
    return 0;
}

/* The second table: one-sided and neighbourhood-collective methods. */
static int onesided(const char *method)
{
    return halo_method_in(halo_rma_methods, method) || halo_method_in(halo_neighbor_methods, method);
}

static int in_family(const struct mb_row *r, int family) { return family < 0 || onesided(r->method) == family; }

/* Distinct values of a row field, in the order they were run (halo rows of
 * one family: 0 point-to-point, 1 one-sided and neighbourhood, -1 all). */
static int distinct(const struct mb_run *run, const char *test, int family, size_t off, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < run->nrows; i++) {
        const char *v = (const char *)&run->rows[i] + off;
        if (strcmp(run->rows[i].test, test) || !in_family(&run->rows[i], family)) continue;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = !strcmp(out[k], v);
        if (!seen && n < max) out[n++] = v;
    }
    return n;
}

/* The stencils (ascending) among the rows of a test, family and periodicity. */
static int stencils(const struct mb_run *run, const char *test, int periodic, int family, int out[NSTENCIL])
{
    int n = 0;
    for (int s = 0; s < NSTENCIL; s++)
        for (int i = 0; i < run->nrows; i++) {
            const struct mb_row *r = &run->rows[i];
            if (r->neighbors == halo_stencils[s] && r->periodic == periodic && !strcmp(r->test, test) &&
                in_family(r, family)) {
                out[n++] = halo_stencils[s];
                break;
            }
        }
    return n;
}

/* The message sizes among the rows, ascending (they run ascending). */
static int sizes(const struct mb_run *run, long long out[64])
{
    int n = 0;
    for (int i = 0; i < run->nrows; i++) {
        long long b = run->rows[i].bytes;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = out[k] == b;
        if (!seen && n < 64) out[n++] = b;
    }
    for (int i = 1; i < n; i++) /* insertion sort: a handful */
        for (int k = i; k > 0 && out[k - 1] > out[k]; k--) {
            long long t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

static void halo_block(const struct mb_run *run, int periodic, int family, const char *note)
{
    const char *methods[64], *comms[16];
    int nm = distinct(run, "halo", family, offsetof(struct mb_row, method), methods, 64);
    int nc = distinct(run, "halo", family, offsetof(struct mb_row, comm), comms, 16);
    if (!nm) return;
    int nbrs[NSTENCIL], ng = stencils(run, "halo", periodic, family, nbrs);
    if (!ng) return;
    int ncols = 1 + ng * nm, nrows = 1 + nc;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    const char **groups = calloc((size_t)ncols, sizeof *groups);
    char glabel[NSTENCIL][32];
    cells[0] = strdup("comm");
    for (int g = 0; g < ng; g++) {
        snprintf(glabel[g], sizeof glabel[g], "%d neighbours", nbrs[g]);
        groups[1 + g * nm] = glabel[g];
        for (int m = 0; m < nm; m++) cells[1 + g * nm + m] = strdup(methods[m]);
    }
    for (int c = 0; c < nc; c++) {
        cells[(1 + c) * ncols] = strdup(comms[c]);
        for (int g = 0; g < ng; g++)
            for (int m = 0; m < nm; m++)
                halo_cell(&cells[(1 + c) * ncols + 1 + g * nm + m], run,
                     find(run, "halo", methods[m], comms[c], nbrs[g], periodic, -1));
    }
    const struct mb_row *any = find(run, "halo", methods[0], comms[0], nbrs[0], periodic, -1);
    printf("\n%s mesh%s, %lld doubles per neighbour: MB/s per process (%s)\n",
           periodic ? "Periodic" : "Non-periodic", family ? ", one-sided and neighbourhood collectives" : "",
           any ? any->bytes / 8 : 0LL, mb_stat_name(run->opts.stat));
    mb_table_emit(stdout, nrows, ncols, cells, groups);
    if (family && note && note[0])
        printf("%s\n", note);
    else if (!family && note && note[0])
        printf("cart: MPI_Cart_create(reorder=1) moved %s\n", note);
    free(groups);
}

static void one_sender_block(const struct mb_run *run)
{
    enum { MAXROWS = 1 + 2 * NSTENCIL, NCOLS = 4 }; /* header + 2 periodicities x stencils */
    char *cells[MAXROWS * NCOLS] = {0};
    int n = 1;
    cells[0] = strdup("stencil");
    cells[1] = strdup("one-sender");
    cells[2] = strdup("halo irecv-isend");
    cells[3] = strdup("one-sender/halo");
    int ncols = NCOLS;
    for (int p = 0; p <= 1; p++)
        for (int s = 0; s < NSTENCIL; s++) {
            int nb = halo_stencils[s];
            const struct mb_row *o = find(run, "one-sender", "isend", "world", nb, p, -1);
            if (!o || n >= MAXROWS) continue;
            const struct mb_row *hr = find(run, "halo", "irecv-isend", "world", nb, p, -1);
            char name[48], ratio[32] = "-";
            snprintf(name, sizeof name, "%d-nbr %s", nb, p ? "periodic" : "non-periodic");
            if (hr && !hr->na && rate(run, hr) > 0) mb_fmt_ratio(ratio, sizeof ratio, rate(run, o) / rate(run, hr));
            cells[n * ncols] = strdup(name);
            halo_cell(&cells[n * ncols + 1], run, o);
            halo_cell(&cells[n * ncols + 2], run, hr);
            cells[n * ncols + 3] = strdup(ratio);
            n++;
        }
    if (n > 1) {
        printf("\nOne sender (world): an interior process sends to its neighbours alone, MB/s (%s)\n",
               mb_stat_name(run->opts.stat));
        mb_table_print(stdout, n, ncols, cells, NULL);
    }
    for (int i = 0; i < n * ncols; i++) free(cells[i]);
}

/* Rate against message size for one periodicity, stencil and communicator. */
static void size_block(const struct mb_run *run, int periodic, int nnbr, const char *comm, const char **methods,
                       int nm, const long long *sz, int nsz)
{
    int one = !strcmp(comm, "world") && find(run, "one-sender", "isend", "world", nnbr, periodic, -1);
    if (!(nm && find(run, "halo", methods[0], comm, nnbr, periodic, -1)) && !one) return;
    int ncols = 1 + nm + one, nrows = 1 + nsz;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells), b[32];
    cells[0] = strdup("bytes");
    for (int m = 0; m < nm; m++) cells[1 + m] = strdup(methods[m]);
    if (one) cells[ncols - 1] = strdup("one-sender");
    for (int s = 0; s < nsz; s++) {
        char **row = cells + (1 + s) * ncols;
        snprintf(b, sizeof b, "%lld", sz[s]);
        row[0] = strdup(b);
        for (int m = 0; m < nm; m++)
            halo_cell(&row[1 + m], run, find(run, "halo", methods[m], comm, nnbr, periodic, sz[s]));
        if (one) halo_cell(&row[ncols - 1], run, find(run, "one-sender", "isend", "world", nnbr, periodic, sz[s]));
    }
    printf("\n%s mesh, %d neighbours, comm %s: MB/s per process against bytes per neighbour message (%s)\n",
           periodic ? "Periodic" : "Non-periodic", nnbr, comm, mb_stat_name(run->opts.stat));
    mb_table_emit(stdout, nrows, ncols, cells, NULL);
}

static void size_blocks(const struct mb_run *run, const long long *sz, int nsz)
{
    const char *methods[64], *comms[16];
    int nm = distinct(run, "halo", -1, offsetof(struct mb_row, method), methods, 64);
    int nc = distinct(run, "halo", -1, offsetof(struct mb_row, comm), comms, 16);
    if (!nc) comms[nc++] = "world"; /* one-sender only */
    for (int p = 0; p <= 1; p++) {
        int nbrs[NSTENCIL], ng = stencils(run, nm ? "halo" : "one-sender", p, -1, nbrs);
        for (int g = 0; g < ng; g++)
            for (int c = 0; c < nc; c++) size_block(run, p, nbrs[g], comms[c], methods, nm, sz, nsz);
    }
}

void halo_report(const struct mb_run *run, const char *cart_note[2], const char *rma_note, const char *grid)
{
    long long sz[64];
    int nsz = sizes(run, sz);
    printf("halocompare: %d processes on %d node(s), grid %s, label %s\n", run->nprocs, run->nnodes, grid,
           run->label);
    mb_print_caveats(stdout, run);
    if (nsz > 1) {
        size_blocks(run, sz, nsz);
    } else {
        for (int p = 0; p <= 1; p++) {
            halo_block(run, p, 0, cart_note[p]);
            halo_block(run, p, 1, rma_note);
        }
        one_sender_block(run);
    }
    printf("\nMB/s = 10^6 bytes one process sends per exchange (neighbours x bytes) / time per exchange,\n"
           "the time being the slowest rank's; n/a = not available here (reason in the CSV).\n");
    fflush(stdout);
}
