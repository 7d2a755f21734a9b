/* The talk-shaped table: rows = communicators, column groups = 4 and 8
 * neighbours, columns = methods, cells = MB/s per process; one block per
 * periodicity, then the one-sender rates beside the halo rate. */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

static const struct mb_row *find(const struct mb_run *run, const char *test, const char *method, const char *comm,
                                 int nnbr, int periodic)
{
    for (int i = 0; i < run->nrows; i++) {
        const struct mb_row *r = &run->rows[i];
        if (r->neighbors == nnbr && r->periodic == periodic && !strcmp(r->test, test) &&
            !strcmp(r->method, method) && !strcmp(r->comm, comm))
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

static void cell(char **c, const struct mb_run *run, const struct mb_row *r)
{
    if (r && !r->na && r->sent_bytes == 0) r = NULL; /* no neighbours to send to */
    *c = mb_cell(r, r && !r->na ? rate(run, r) : 0);
}

/* The second table: one-sided (rma-*) and neighbourhood-collective methods. */
static int onesided(const char *method) { return !strncmp(method, "rma-", 4) || !strncmp(method, "neighbor-", 9); }

/* Distinct values of a row field, in the order they were run (halo rows of
 * one table: family 0 point-to-point, 1 one-sided and neighbourhood). */
static int distinct(const struct mb_run *run, const char *test, int family, size_t off, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < run->nrows; i++) {
        const char *v = (const char *)&run->rows[i] + off;
        if (strcmp(run->rows[i].test, test) || onesided(run->rows[i].method) != family) continue;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = !strcmp(out[k], v);
        if (!seen && n < max) out[n++] = v;
    }
    return n;
}

static void halo_block(const struct mb_run *run, int periodic, int family, const char *note)
{
    const char *methods[64], *comms[16];
    int nm = distinct(run, "halo", family, offsetof(struct mb_row, method), methods, 64);
    int nc = distinct(run, "halo", family, offsetof(struct mb_row, comm), comms, 16);
    if (!nm) return;
    int nbrs[2], ng = 0;
    for (int nb = 4; nb <= 8; nb += 4)
        for (int i = 0; i < run->nrows; i++)
            if (run->rows[i].neighbors == nb && run->rows[i].periodic == periodic &&
                !strcmp(run->rows[i].test, "halo") && onesided(run->rows[i].method) == family) {
                nbrs[ng++] = nb;
                break;
            }
    if (!ng) return;
    int ncols = 1 + ng * nm, nrows = 1 + nc;
    char **cells = calloc((size_t)(ncols * nrows), sizeof *cells);
    const char **groups = calloc((size_t)ncols, sizeof *groups);
    char glabel[2][32];
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
                cell(&cells[(1 + c) * ncols + 1 + g * nm + m], run,
                     find(run, "halo", methods[m], comms[c], nbrs[g], periodic));
    }
    const struct mb_row *any = find(run, "halo", methods[0], comms[0], nbrs[0], periodic);
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
    enum { MAXROWS = 5, NCOLS = 4 }; /* header + 2 periodicities x 2 stencils */
    char *cells[MAXROWS * NCOLS] = {0};
    int n = 1;
    cells[0] = strdup("stencil");
    cells[1] = strdup("one-sender");
    cells[2] = strdup("halo irecv-isend");
    cells[3] = strdup("one-sender/halo");
    int ncols = NCOLS;
    for (int p = 0; p <= 1; p++)
        for (int nb = 4; nb <= 8; nb += 4) {
            const struct mb_row *o = find(run, "one-sender", "isend", "world", nb, p);
            if (!o || n >= MAXROWS) continue;
            const struct mb_row *hr = find(run, "halo", "irecv-isend", "world", nb, p);
            char name[48], ratio[32] = "-";
            snprintf(name, sizeof name, "%d-nbr %s", nb, p ? "periodic" : "non-periodic");
            if (hr && !hr->na && rate(run, hr) > 0) snprintf(ratio, sizeof ratio, "%.2f", rate(run, o) / rate(run, hr));
            cells[n * ncols] = strdup(name);
            cell(&cells[n * ncols + 1], run, o);
            cell(&cells[n * ncols + 2], run, hr);
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

void halo_report(const struct mb_run *run, const char *cart_note[2], const char *rma_note)
{
    printf("halocompare: %d processes on %d node(s), label %s\n", run->nprocs, run->nnodes, run->label);
    for (int p = 0; p <= 1; p++) {
        halo_block(run, p, 0, cart_note[p]);
        halo_block(run, p, 1, rma_note);
    }
    one_sender_block(run);
    printf("\nMB/s = 10^6 bytes one process sends per exchange (neighbours x bytes) / time per exchange,\n"
           "the time being the slowest rank's; n/a = not available here (reason in the CSV).\n");
    fflush(stdout);
}
